import { type FormEvent, useCallback, useEffect, useRef, useState } from "react";
import type { AgentProfile, ChatMessage, Thread, ThreadPage } from "../../../client/api.ts";
import { followThread, type LiveEventFrame, type LiveStatus } from "../../../client/live.ts";
import { api } from "../base.ts";
import { ErrorBox, RichText, Switch, useLoad } from "../ui.tsx";

type Item =
  | { kind: "message"; key: string; message: ChatMessage }
  | { kind: "tool"; key: string; name: string; input: unknown; result?: string; isError?: boolean };

/** Loaded history first, then what arrived live meanwhile and is not in it (ids dedupe). */
function mergeHistory(loaded: ChatMessage[], live: Item[]): Item[] {
  const ids = new Set(loaded.map((m) => m.id));
  return [
    ...loaded.map((message): Item => ({ kind: "message", key: message.id, message })),
    ...live.filter((i) => i.kind !== "message" || !ids.has(i.message.id)),
  ];
}

export function ChatPage(props: {
  threadId: string | undefined;
  profile: AgentProfile;
  onProfile: (p: AgentProfile) => void;
}) {
  const threads = useLoad(api.threadPage);
  // Pages after the first, loaded on request; the first is reloaded as threads change.
  const [older, setOlder] = useState<ThreadPage>();
  const [olderError, setOlderError] = useState<unknown>();
  const first = threads.data?.items ?? [];
  const firstIds = new Set(first.map((t) => t.id));
  const list = [...first, ...(older?.items ?? []).filter((t) => !firstIds.has(t.id))];
  const nextCursor = older ? older.nextCursor : threads.data?.nextCursor;
  const loadOlder = async () => {
    try {
      const page = await api.threadPage(nextCursor);
      setOlder((o) => ({
        items: [...(o?.items ?? []), ...page.items],
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      }));
      setOlderError(undefined);
    } catch (err) {
      setOlderError(err);
    }
  };
  const threadId = props.threadId ?? list.find((t) => t.main)?.id ?? list[0]?.id;
  const thread = list.find((t) => t.id === threadId);

  return (
    <div className="chat-layout">
      <ThreadList
        threads={list}
        current={threadId}
        onCreated={() => void threads.reload()}
        onOlder={nextCursor ? () => void loadOlder() : undefined}
        olderError={olderError}
      />
      {threadId ? (
        <ThreadView
          key={threadId}
          threadId={threadId}
          thread={thread}
          profile={props.profile}
          onProfile={props.onProfile}
          onTurnEnd={() => void threads.reload()}
        />
      ) : (
        <ErrorBox error={threads.error} />
      )}
    </div>
  );
}

function ThreadList(props: {
  threads: Thread[];
  current: string | undefined;
  onCreated: () => void;
  /** Set while older threads remain to be listed. */
  onOlder: (() => void) | undefined;
  olderError: unknown;
}) {
  const [error, setError] = useState<unknown>();
  const create = async () => {
    try {
      const thread = await api.createThread();
      props.onCreated();
      window.location.hash = `#/chat/${encodeURIComponent(thread.id)}`;
    } catch (err) {
      setError(err);
    }
  };
  return (
    <aside className="threads" aria-label="Threads">
      <button type="button" onClick={create}>
        New thread
      </button>
      <ErrorBox error={error} />
      <ul>
        {props.threads.map((t) => (
          <li key={t.id}>
            <a href={`#/chat/${encodeURIComponent(t.id)}`} aria-current={t.id === props.current ? "page" : undefined}>
              {t.main ? `${t.title} (main)` : t.title}
            </a>
          </li>
        ))}
      </ul>
      {props.onOlder && (
        <button type="button" onClick={props.onOlder}>
          Older threads
        </button>
      )}
      <ErrorBox error={props.olderError} />
    </aside>
  );
}

function ContextUsage({ thread }: { thread: Thread | undefined }) {
  // Hidden when the model's window is unknown (spec): a percentage of nothing says nothing.
  if (!thread?.contextWindow) return null;
  const used = thread.contextTokens ?? 0;
  const percent = Math.min(100, Math.round((used / thread.contextWindow) * 100));
  return (
    <span className="context-usage">
      <label htmlFor="context-meter">Context {percent}%</label>
      <meter id="context-meter" min={0} max={thread.contextWindow} value={used} high={thread.contextWindow * 0.9}>
        {percent}%
      </meter>
      <span className="muted">
        {used.toLocaleString()} / {thread.contextWindow.toLocaleString()} tokens
      </span>
    </span>
  );
}

function ThreadView(props: {
  threadId: string;
  thread: Thread | undefined;
  profile: AgentProfile;
  onProfile: (p: AgentProfile) => void;
  onTurnEnd: () => void;
}) {
  const { threadId, profile, onTurnEnd } = props;
  const [items, setItems] = useState<Item[]>([]);
  const [drafts, setDrafts] = useState<Record<number, string>>({});
  const [status, setStatus] = useState<{ status: LiveStatus; detail?: string }>({ status: "connecting" });
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [text, setText] = useState("");
  const logRef = useRef<HTMLDivElement>(null);

  const onEvent = useCallback(
    (e: LiveEventFrame) => {
      const data = e.data as Record<string, unknown>;
      if (e.event === "message") {
        const message = data as unknown as ChatMessage;
        setItems((prev) =>
          prev.some((i) => i.kind === "message" && i.message.id === message.id)
            ? prev
            : [...prev, { kind: "message", key: message.id, message }],
        );
        // A delivered message replaces the streamed text of its step.
        if (message.role === "assistant") setDrafts({});
        if (message.source !== "web") onTurnEnd();
      } else if (e.event === "delta") {
        const step = Number(data.step);
        setDrafts((prev) => ({ ...prev, [step]: (prev[step] ?? "") + String(data.text ?? "") }));
      } else if (e.event === "step") {
        const step = Number(data.step);
        // Not delivered (verbose off, an intermediate step): its streamed text is dropped.
        if (!data.delivered) {
          setDrafts((prev) => {
            const { [step]: _dropped, ...rest } = prev;
            return rest;
          });
        }
      } else if (e.event === "tool_call") {
        const key = `tool-${String(data.id)}`;
        setItems((prev) => [...prev, { kind: "tool", key, name: String(data.name), input: data.input }]);
      } else if (e.event === "tool_result") {
        const key = `tool-${String(data.id)}`;
        setItems((prev) =>
          prev.map((i) =>
            i.kind === "tool" && i.key === key
              ? { ...i, result: String(data.content), isError: Boolean(data.isError) }
              : i,
          ),
        );
      }
    },
    [onTurnEnd],
  );

  useEffect(() => {
    // Follow first, then load: whatever happens in between arrives live and is merged by id.
    const follow = followThread(api, threadId, onEvent, (s, detail) =>
      setStatus({ status: s, ...(detail ? { detail } : {}) }),
    );
    api
      .messages(threadId)
      .then((loaded) => setItems((prev) => mergeHistory(loaded, prev)))
      .catch(setError);
    return () => follow.close();
  }, [threadId, onEvent]);

  useEffect(() => {
    const log = logRef.current;
    if (log && items.length + Object.keys(drafts).length > 0) log.scrollTop = log.scrollHeight;
  }, [items, drafts]);

  const send = async (event: FormEvent) => {
    event.preventDefault();
    const message = text.trim();
    if (!message || busy) return;
    setBusy(true);
    setError(undefined);
    setText("");
    try {
      const end = await api.send(threadId, message);
      if (end.status === "error") setError(new Error(end.error));
    } catch (err) {
      setError(err);
      setText(message);
    } finally {
      setBusy(false);
      setDrafts({});
      onTurnEnd();
    }
  };

  const stop = async () => {
    try {
      await api.stop(threadId);
    } catch (err) {
      setError(err);
    }
  };

  const setVerbose = async (verbose: boolean) => {
    try {
      props.onProfile(await api.setVerbose(verbose));
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section className="thread" aria-label="Conversation">
      <div className="thread-bar">
        <h2>{props.thread?.title ?? "Thread"}</h2>
        <span role="status" className={`live ${status.status}`}>
          {status.status === "live" ? "Live" : status.status === "connecting" ? "Connecting…" : "Reconnecting…"}
        </span>
        <ContextUsage thread={props.thread} />
        <span className="verbose-toggle">
          Verbose <Switch label="Verbose" checked={profile.verbose} onChange={setVerbose} />
        </span>
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling log must be reachable by keyboard (axe scrollable-region-focusable) */}
      <div className="log" role="log" aria-live="polite" aria-label="Messages" ref={logRef} tabIndex={0}>
        {items.length === 0 && Object.keys(drafts).length === 0 && <p className="muted">No messages yet.</p>}
        {items.map((item) =>
          item.kind === "message" ? (
            <MessageView key={item.key} message={item.message} />
          ) : (
            <details key={item.key} className={`tool ${item.isError ? "tool-error" : ""}`}>
              <summary>
                Tool: {item.name}
                {item.result === undefined ? " (running)" : item.isError ? " (error)" : ""}
              </summary>
              <pre>{JSON.stringify(item.input, null, 2)}</pre>
              {item.result !== undefined && <pre>{item.result}</pre>}
            </details>
          ),
        )}
        {Object.entries(drafts).map(([step, draft]) => (
          <article key={`draft-${step}`} className="message assistant draft" aria-label="Agent is writing">
            <RichText text={draft} />
          </article>
        ))}
      </div>
      <ErrorBox error={error} />
      {status.status === "reconnecting" && (
        <p className="warning">The live stream is interrupted ({status.detail ?? "no detail"}); reconnecting…</p>
      )}
      <form className="composer" onSubmit={send}>
        <label htmlFor="composer-text" className="visually-hidden">
          Message
        </label>
        <textarea
          id="composer-text"
          value={text}
          placeholder="Message the agent. /compact [focus] summarizes older messages."
          rows={2}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              e.currentTarget.form?.requestSubmit();
            }
          }}
        />
        <div className="composer-actions">
          <button type="submit" disabled={busy || text.trim() === ""}>
            Send
          </button>
          <button type="button" className="danger" onClick={stop} disabled={!busy}>
            Stop
          </button>
        </div>
      </form>
    </section>
  );
}

function sourceLabel(source: string): string | undefined {
  if (source.startsWith("webhook:")) return "webhook";
  if (source === "heartbeat") return "heartbeat";
  if (source.startsWith("schedule")) return "scheduled";
  if (source === "command") return "command";
  return undefined;
}

function MessageView({ message }: { message: ChatMessage }) {
  const label = sourceLabel(message.source);
  return (
    <article
      className={`message ${message.role}${label ? ` delivery ${label}` : ""}`}
      aria-label={message.role === "user" ? "Your message" : "Agent message"}
    >
      {label && <span className="badge">{label}</span>}
      <RichText text={message.text} />
      <time dateTime={message.createdAt} className="muted">
        {new Date(message.createdAt).toLocaleTimeString()}
      </time>
    </article>
  );
}
