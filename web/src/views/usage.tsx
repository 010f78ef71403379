// What the agent's model calls used and cost (usage.daily): a bar a day
// of the tokens the model read, the part read from a prompt cache shaded,
// each bar's title with its figures; then the sessions, costliest first.

import type { TokenCounts, UsageDailyResult } from "../protocol/generated";
import { Card, ErrorNote, useClient, useLoad } from "../ui";

const DAYS = 30;
const WIDTH = 600;
const HEIGHT = 120;

export function UsageCard({ connected }: { connected: boolean }) {
  const client = useClient();
  const usage = useLoad(() => client.call("usage.daily", { days: DAYS }), [client, connected], connected);
  const u = usage.data;
  return (
    <Card title={`Usage, last ${DAYS} days`} actions={<button class="secondary" onClick={usage.reload}>Refresh</button>}>
      <ErrorNote error={usage.error} />
      {u && u.total.total === 0 && <p class="muted">No model calls yet.</p>}
      {u && u.total.total > 0 && <UsageFigures usage={u} />}
    </Card>
  );
}

function UsageFigures({ usage }: { usage: UsageDailyResult }) {
  return (
    <>
      <p id="usage-total">{summary(usage.total)}</p>
      <Chart usage={usage} />
      <ul class="list" id="usage-sessions">
        {usage.sessions.map((s) => (
          <li key={s.sessionKey}>
            <span class="mono">{s.sessionKey}</span> <span class="muted small">{summary(s.tokens)}</span>
          </li>
        ))}
      </ul>
    </>
  );
}

function Chart({ usage }: { usage: UsageDailyResult }) {
  const read = (t: TokenCounts) => t.input + t.cacheRead + t.cacheWrite;
  const most = Math.max(1, ...usage.days.map((d) => read(d.tokens)));
  const slot = WIDTH / usage.days.length;
  const bar = Math.max(1, slot - 2);
  return (
    <>
    <svg class="usage-chart" id="usage-chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} preserveAspectRatio="none" role="img" aria-label="Tokens read per day">
      {usage.days.map((d, i) => {
        const all = (read(d.tokens) / most) * HEIGHT;
        const cached = (d.tokens.cacheRead / most) * HEIGHT;
        const x = i * slot + 1;
        return (
          <g key={d.day} class="usage-day" data-day={d.day}>
            <title>{`${d.day}: ${summary(d.tokens)}`}</title>
            <rect class="uncached" x={x} y={HEIGHT - all} width={bar} height={all - cached} />
            <rect class="cached" x={x} y={HEIGHT - cached} width={bar} height={cached} />
          </g>
        );
      })}
    </svg>
    <p class="muted small">
      Tokens the model read each day, {usage.days[0]?.day} to {usage.days[usage.days.length - 1]?.day}; the pale part was read from
      the prompt cache.
    </p>
    </>
  );
}

/** `41800 read (94% from cache), 300 out, ~$0.0297` — as `gsv usage` says it. */
export function summary(t: TokenCounts): string {
  const read = t.input + t.cacheRead + t.cacheWrite;
  const share = read === 0 ? 0 : Math.round((100 * t.cacheRead) / read);
  const cost = t.cost == null ? "" : `, ${costText(t.cost)}`;
  return `${read} read (${share}% from cache), ${t.output} out${cost}`;
}

/** `~$0.0297`, `~$1.25`. */
export function costText(cost: number): string {
  return cost < 1 ? `~$${cost.toFixed(4)}` : `~$${cost.toFixed(2)}`;
}
