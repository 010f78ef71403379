// Conversation messages as the session stores them: user text and images,
// assistant text (markdown, sanitized), thinking (collapsed), tool calls
// with their results folded under them.

import type {
  AssistantBlock,
  AssistantMessage,
  ContentBlock,
  Message,
  ToolResultMessage,
  UserContent,
} from "../protocol/generated";
import { renderMarkdown } from "../markdown";

export function Markdown({ text }: { text: string }) {
  return <div class="md" dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} />;
}

/** Tool results by the id of the call they answer. */
export function resultsById(messages: Message[]): Map<string, ToolResultMessage> {
  const m = new Map<string, ToolResultMessage>();
  for (const msg of messages) if (msg.role === "toolResult") m.set(msg.toolCallId, msg);
  return m;
}

/** Call ids that some assistant message in `messages` made. */
function callIds(messages: Message[]): Set<string> {
  const s = new Set<string>();
  for (const msg of messages) {
    if (msg.role !== "assistant") continue;
    for (const b of msg.content) if (b.type === "toolCall") s.add(b.id);
  }
  return s;
}

export function MessageList({ messages }: { messages: Message[] }) {
  const results = resultsById(messages);
  const calls = callIds(messages);
  return (
    <>
      {messages.map((m, i) => {
        if (m.role === "toolResult" && calls.has(m.toolCallId)) return null;
        return <MessageView key={`${m.timestamp}-${i}`} message={m} results={results} />;
      })}
    </>
  );
}

export function MessageView({ message, results }: { message: Message; results: Map<string, ToolResultMessage> }) {
  switch (message.role) {
    case "user":
      return (
        <div class="msg user" data-role="user">
          <UserContentView content={message.content} />
        </div>
      );
    case "assistant":
      return <AssistantView message={message} results={results} />;
    case "toolResult":
      return (
        <div class="msg tool" data-role="toolResult">
          <ToolResultView result={message} />
        </div>
      );
  }
}

function UserContentView({ content }: { content: UserContent }) {
  if (typeof content === "string") return <div class="plain">{content}</div>;
  return <Blocks blocks={content} />;
}

function Blocks({ blocks }: { blocks: ContentBlock[] }) {
  return (
    <>
      {blocks.map((b, i) =>
        b.type === "text" ? (
          <div class="plain" key={i}>
            {b.text}
          </div>
        ) : (
          <FileBlock key={i} block={b} />
        ),
      )}
    </>
  );
}

// An image, or a stored file the model reads about (audio with its
// transcript, video, a document).
function FileBlock({ block }: { block: Exclude<ContentBlock, { type: "text" }> }) {
  if (block.type === "image") return <ImageBlock block={block} />;
  const size = block.size != null ? `, ${Math.max(1, Math.round(block.size / 1024))} KB` : "";
  return (
    <div class="attachment small" data-kind={block.kind}>
      <span class="muted">
        [{block.kind} {block.filename ?? block.mimeType}
        {size}]
      </span>
      {block.transcript && <div class="plain">“{block.transcript}”</div>}
    </div>
  );
}

function ImageBlock({ block }: { block: Extract<ContentBlock, { type: "image" }> }) {
  if (block.data && block.mimeType.startsWith("image/")) {
    return <img class="msg-image" alt="image" src={`data:${block.mimeType};base64,${block.data}`} />;
  }
  return <div class="muted small">[image {block.mimeType}{block.r2Key ? `, stored as ${block.r2Key}` : ""}]</div>;
}

export function AssistantView({
  message,
  results,
  streaming,
}: {
  message: AssistantMessage;
  results: Map<string, ToolResultMessage>;
  streaming?: boolean;
}) {
  return (
    <div class={streaming ? "msg assistant streaming" : "msg assistant"} data-role="assistant">
      {message.content.map((b, i) => (
        <AssistantBlockView key={i} block={b} results={results} />
      ))}
      {message.errorMessage && <p class="error">{message.errorMessage}</p>}
    </div>
  );
}

function AssistantBlockView({ block, results }: { block: AssistantBlock; results: Map<string, ToolResultMessage> }) {
  switch (block.type) {
    case "text":
      return <Markdown text={block.text} />;
    case "thinking":
      return (
        <details class="thinking">
          <summary>Thinking</summary>
          <pre>{block.thinking}</pre>
        </details>
      );
    case "toolCall": {
      const result = results.get(block.id);
      const state = !result ? "pending" : result.isError ? "error" : "ok";
      return (
        <details class={`toolcall ${state}`} data-tool={block.name}>
          <summary>
            <span class="tool-name">{block.name}</span> <span class={`pill ${state}`}>{state === "pending" ? "…" : state}</span>
          </summary>
          <pre class="json">{JSON.stringify(block.arguments, null, 2)}</pre>
          {result && <ToolResultView result={result} />}
        </details>
      );
    }
  }
}

function ToolResultView({ result }: { result: ToolResultMessage }) {
  return (
    <div class={result.isError ? "tool-result error" : "tool-result"}>
      {result.content.map((b, i) =>
        b.type === "text" ? (
          <pre key={i}>{b.text}</pre>
        ) : (
          <FileBlock key={i} block={b} />
        ),
      )}
    </div>
  );
}
