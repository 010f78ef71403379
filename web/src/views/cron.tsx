// Cron jobs and heartbeats: the scheduler's state (cron.status), the jobs
// with their schedules and next runs in words (cron.list), enable/disable
// (cron.update), run now, remove, past runs (cron.runs), a new job
// (cron.add, read by the same normalizer as the CLI's and the agent's),
// and each agent's heartbeat (heartbeat.status/trigger).

import { useState } from "preact/hooks";
import type { ViewProps } from "../tabs";
import type { CronJobView, CronRunsResult, JobSpec, JsonValue, Schedule } from "../protocol/generated";
import { Card, ErrorNote, fmtAgo, fmtDuration, fmtTime, useAction, useClient, useLoad } from "../ui";

export function CronView({ connected }: ViewProps) {
  const client = useClient();
  const status = useLoad(() => client.call("cron.status"), [client, connected], connected);
  const jobs = useLoad(() => client.call("cron.list", { includeDisabled: true, limit: 200 }), [client, connected], connected);
  const reload = () => {
    status.reload();
    jobs.reload();
  };
  const s = status.data;
  return (
    <div class="stack">
      <Card title="Scheduler" actions={<button class="secondary" onClick={reload}>Refresh</button>}>
        <ErrorNote error={status.error} />
        {s && (
          <dl class="facts" id="cron-status">
            <dt>Jobs</dt>
            <dd>
              {s.count} of at most {s.maxJobs}
            </dd>
            <dt>Due / running</dt>
            <dd>
              {s.dueCount} / {s.runningCount} (at most {s.maxConcurrentRuns} at once)
            </dd>
            <dt>Next run</dt>
            <dd>{s.nextRunAtMs ? `${fmtTime(s.nextRunAtMs)} (${fmtAgo(s.nextRunAtMs)})` : "—"}</dd>
            {s.timezone && (
              <>
                <dt>Time zone</dt>
                <dd>{s.timezone}</dd>
              </>
            )}
          </dl>
        )}
      </Card>
      <Card title="Jobs">
        <ErrorNote error={jobs.error} />
        {jobs.data && jobs.data.jobs.length === 0 && <p class="muted">No jobs. Add one below, or ask the agent ("remind me in 20 minutes…").</p>}
        <ul class="list" id="cron-jobs">
          {(jobs.data?.jobs ?? []).map((j) => (
            <Job key={j.id} job={j} onChanged={reload} />
          ))}
        </ul>
      </Card>
      <AddJob onAdded={reload} />
      <Heartbeats connected={connected} />
    </div>
  );
}

function specText(spec: JobSpec): string {
  return spec.kind === "systemEvent" ? spec.text : spec.message;
}

function Job({ job, onChanged }: { job: CronJobView; onChanged: () => void }) {
  const client = useClient();
  const [act, state] = useAction();
  const [runs, setRuns] = useState<CronRunsResult | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const st = job.state;
  return (
    <li class="job" data-job={job.id}>
      <div class="job-head">
        <strong>{job.name}</strong> <span class={`pill ${job.enabled ? "ok" : ""}`}>{job.enabled ? "enabled" : "disabled"}</span>{" "}
        <span class="pill">{job.spec.kind === "task" ? "task" : "reminder"}</span>
      </div>
      <p class="small">{specText(job.spec)}</p>
      <p class="muted small">
        {job.scheduleHuman ?? job.schedule.kind} · next: {job.nextRunHuman ?? fmtTime(st.nextRunAtMs)}
        {st.lastStatus && (
          <>
            {" "}
            · last: <span class={`pill ${st.lastStatus}`}>{st.lastStatus}</span> {fmtAgo(st.lastRunAtMs)}
            {st.lastError ? ` — ${st.lastError}` : ""}
          </>
        )}
      </p>
      <div class="row wrap">
        <button
          class="secondary"
          disabled={state.busy}
          onClick={() =>
            void act(async () => {
              await client.call("cron.update", { id: job.id, patch: { enabled: !job.enabled } });
              onChanged();
            })
          }
        >
          {job.enabled ? "Disable" : "Enable"}
        </button>
        <button
          class="secondary"
          data-action="run"
          disabled={state.busy}
          onClick={() =>
            void act(async () => {
              const r = await client.call("cron.run", { id: job.id, mode: "force" });
              setNote(r.results.map((x) => `${x.status ?? "started"}${x.error ? `: ${x.error}` : ""}`).join(", ") || "nothing ran");
              onChanged();
            })
          }
        >
          Run now
        </button>
        <button
          class="secondary"
          data-action="runs"
          disabled={state.busy}
          onClick={() => void act(async () => setRuns(await client.call("cron.runs", { jobId: job.id, limit: 20 })))}
        >
          Runs
        </button>
        <button
          class="danger"
          disabled={state.busy}
          onClick={() =>
            void act(async () => {
              if (!confirm(`Remove ${job.name}?`)) return;
              await client.call("cron.remove", { id: job.id });
              onChanged();
            })
          }
        >
          Remove
        </button>
      </div>
      <ErrorNote error={state.error} />
      {note && <p class="ok-note">{note}</p>}
      {runs && (
        <table class="runs">
          <thead>
            <tr>
              <th>When</th>
              <th>Status</th>
              <th>Late</th>
              <th>Took</th>
              <th>Answer</th>
            </tr>
          </thead>
          <tbody>
            {runs.runs.map((r) => (
              <tr key={r.id}>
                <td>{fmtTime(r.ts)}</td>
                <td>
                  <span class={`pill ${r.status}`}>{r.status}</span>
                </td>
                <td>{fmtDuration(r.lateMs)}</td>
                <td>{fmtDuration(r.durationMs)}</td>
                <td class="clamp">{r.error ?? r.summary ?? ""}</td>
              </tr>
            ))}
            {runs.runs.length === 0 && (
              <tr>
                <td colSpan={5} class="muted">
                  No runs yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      )}
    </li>
  );
}

type When = Schedule["kind"];

function AddJob({ onAdded }: { onAdded: () => void }) {
  const client = useClient();
  const [name, setName] = useState("");
  const [kind, setKind] = useState<When>("at");
  const [when, setWhen] = useState("in 20m");
  const [tz, setTz] = useState("");
  const [task, setTask] = useState(false);
  const [text, setText] = useState("");
  const [act, state] = useAction();
  const [added, setAdded] = useState<string | null>(null);

  // The normalizer reads loose forms (schedule/tool_input.rs): "in 20m" or
  // a date-time for `at`, minutes for `every`, an expression for `cron`.
  const schedule = (): JsonValue => {
    const w = when.trim();
    switch (kind) {
      case "at":
        return /^in\s/i.test(w) ? { kind, in: w.replace(/^in\s+/i, "") } : { kind, at: w };
      case "every":
        return { kind, everyMinutes: Number(w) };
      case "cron":
        return tz.trim() ? { kind, expr: w, tz: tz.trim() } : { kind, expr: w };
    }
  };
  const spec = (): JobSpec => (task ? { kind: "task", message: text } : { kind: "systemEvent", text });

  return (
    <Card title="New job">
      <form
        class="form-grid"
        id="cron-add"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            const r = await client.call("cron.add", {
              name: name.trim() || null,
              schedule: schedule(),
              spec: spec(),
            });
            setAdded(`Added ${r.job.name}.`);
            setText("");
            setName("");
            onAdded();
          });
        }}
      >
        <label>
          Name
          <input value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="(from the text)" />
        </label>
        <label>
          When
          <select value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value as When)}>
            <option value="at">once (at)</option>
            <option value="every">every N minutes</option>
            <option value="cron">cron expression</option>
          </select>
        </label>
        <label>
          {kind === "at" ? "Time (\"in 20m\", \"tomorrow 9am\", ISO)" : kind === "every" ? "Minutes" : "Expression (5 fields)"}
          <input name="when" value={when} onInput={(e) => setWhen((e.target as HTMLInputElement).value)} />
        </label>
        {kind === "cron" && (
          <label>
            Time zone
            <input value={tz} onInput={(e) => setTz((e.target as HTMLInputElement).value)} placeholder="your userTimezone" />
          </label>
        )}
        <label class="check">
          <input type="checkbox" checked={task} onChange={(e) => setTask((e.target as HTMLInputElement).checked)} />
          A task (its own session) instead of a reminder in the main one
        </label>
        <label class="wide">
          {task ? "Task" : "Reminder"}
          <textarea name="text" rows={2} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
        </label>
        <div>
          <button type="submit" disabled={state.busy || !text.trim()}>
            Add
          </button>
        </div>
      </form>
      <ErrorNote error={state.error} />
      {added && <p class="ok-note">{added}</p>}
    </Card>
  );
}

function Heartbeats({ connected }: { connected: boolean }) {
  const client = useClient();
  const hb = useLoad(() => client.call("heartbeat.status"), [client, connected], connected);
  const [act, state] = useAction();
  const [note, setNote] = useState<string | null>(null);
  const agents = Object.values(hb.data?.agents ?? {}).filter((a) => !!a);
  return (
    <Card title="Heartbeats" actions={<button class="secondary" onClick={hb.reload}>Refresh</button>}>
      <ErrorNote error={hb.error ?? state.error} />
      {hb.data && agents.length === 0 && <p class="muted">No heartbeat is scheduled.</p>}
      <ul class="list" id="heartbeats">
        {agents.map((a) => (
          <li key={a!.agentId} class="job">
            <div class="job-head">
              <strong>{a!.agentId}</strong> <span class="muted small">every {fmtDuration(a!.everyMs)}</span>
            </div>
            <p class="muted small">
              next {a!.nextHeartbeatAt ? fmtAgo(a!.nextHeartbeatAt) : "—"} · last {fmtAgo(a!.lastHeartbeatAt)}
              {a!.lastStatus && (
                <>
                  {" "}
                  <span class={`pill ${a!.lastStatus}`}>{a!.lastStatus}</span>
                </>
              )}
              {a!.lastSkipReason ? ` · skipped: ${a!.lastSkipReason}` : ""}
              {a!.lastError ? ` · ${a!.lastError}` : ""}
              {a!.lastOutcome ? ` · ${a!.lastOutcome}` : ""}
            </p>
            <button
              class="secondary"
              data-action="beat"
              disabled={state.busy}
              onClick={() =>
                void act(async () => {
                  const r = await client.call("heartbeat.trigger", { agentId: a!.agentId });
                  setNote(r.skipped ? `Skipped: ${r.skipReason ?? r.message}` : r.message);
                  hb.reload();
                })
              }
            >
              Beat now
            </button>
          </li>
        ))}
      </ul>
      {note && (
        <p class="ok-note" id="heartbeat-note">
          {note}
        </p>
      )}
    </Card>
  );
}
