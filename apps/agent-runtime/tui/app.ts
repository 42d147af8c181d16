import { Box, Static, Text, useApp, useInput, useStdout } from "ink";
import {
  type FunctionComponent,
  createElement as h,
  type ReactNode,
  useCallback,
  useEffect,
  useRef,
  useState,
} from "react";
import {
  type AgentProfile,
  type ChatMessage,
  errorMessage,
  type RuntimeClient,
  type RuntimeUsageFigures,
} from "../client/api.ts";
import { followThread, type LiveEventFrame, type LiveStatus } from "../client/live.ts";
import { COMMANDS, completeCommand, type ModelSlot, parseCommand } from "./commands.ts";
import { terminalText } from "./terminal-text.ts";

interface Line {
  id: string;
  text: string;
  color?: string;
  bold?: boolean;
}

const lineText = (item: Line) =>
  h(Text, { key: item.id, wrap: "wrap", color: item.color, bold: item.bold }, terminalText(item.text));

/** Ink's Static for our lines (no JSX here: Node runs this file as it is). */
function LineStatic(props: { items: Line[]; render: (item: Line) => ReactNode }) {
  // Static takes a render function as its child, which createElement's types do not describe.
  const StaticLines = Static as unknown as FunctionComponent<{ items: Line[]; children?: ReactNode }>;
  return h(StaticLines, { items: props.items }, props.render as unknown as ReactNode);
}

const RETRY_MS = 2000;
const QUIT_WINDOW_MS = 2000;
const FALLBACK: Record<ModelSlot, string> = {
  main: "the environment's default main model",
  heartbeat: "the main model",
  cron: "the main model",
};
const SLOT_NAME: Record<ModelSlot, string> = { main: "main", heartbeat: "heartbeat", cron: "cron" };

let lineSeq = 0;
/** One line of usage figures; the cost is a floor (≥) when some usage has no known price. */
function usageText(f: RuntimeUsageFigures): string {
  const cost = `${f.unpriced > 0 ? "≥ " : ""}$${f.costUsd.toFixed(4)}`;
  const audio =
    f.voiceSessions > 0
      ? `, meetings ${f.audioInputMinutes.toFixed(2)} min heard / ${f.audioOutputMinutes.toFixed(2)} min spoken`
      : "";
  return `${cost}, ${f.inputTokens} in / ${f.outputTokens} out tokens, ${f.modelCalls} model calls${audio}`;
}

const line = (text: string, color?: string, bold?: boolean): Line => ({
  id: `l${++lineSeq}`,
  text,
  ...(color ? { color } : {}),
  ...(bold ? { bold } : {}),
});

/** The runtime's Markdown bold (`**Webhook: x**`) reads fine without the stars in a terminal. */
const plain = (text: string) => text.replace(/\*\*([^*]+)\*\*/g, "$1");

function messageLine(m: ChatMessage, agent: string): Line {
  if (m.role === "user") return line(`you: ${m.text}`, "cyan");
  const delivery = m.source.startsWith("webhook:") || m.source === "heartbeat" || m.source.startsWith("schedule:");
  return line(`${agent}: ${plain(m.text)}`, delivery ? "magenta" : undefined);
}

export function App(props: { client: RuntimeClient; url: string; threadId?: string }) {
  const { client } = props;
  const { exit } = useApp();
  const { stdout } = useStdout();
  const [columns, setColumns] = useState(stdout.columns || 80);
  const [profile, setProfile] = useState<AgentProfile>();
  const [unreachable, setUnreachable] = useState<string>();
  const [thread, setThread] = useState<{ id: string; title: string }>();
  const [history, setHistory] = useState<Line[]>([line(`Connecting to ${props.url}… (/help for commands)`, "gray")]);
  const [draft, setDraft] = useState("");
  const [status, setStatus] = useState<LiveStatus>("connecting");
  // Keys can arrive faster than renders: the handler reads and writes the line through a ref.
  const [input, setInputState] = useState("");
  const inputRef = useRef("");
  const setInput = (next: string) => {
    inputRef.current = next;
    setInputState(next);
  };
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string>();
  const quitArmed = useRef(0);
  const seen = useRef(new Set<string>());
  // Where the last `/threads` listing stopped, for `/threads more`.
  const listed = useRef<{ cursor: string | undefined; count: number }>({ cursor: undefined, count: 0 });
  const agentName = profile?.name ?? "agent";

  const say = useCallback((...lines: Line[]) => setHistory((prev) => [...prev, ...lines]), []);

  useEffect(() => {
    const onResize = () => setColumns(stdout.columns || 80);
    stdout.on("resize", onResize);
    return () => {
      stdout.off("resize", onResize);
    };
  }, [stdout]);

  // Profile and the thread to open; while the runtime cannot be reached, say so and retry.
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const p = await client.profile();
        const threads = await client.threads();
        // `--thread` may name a thread older than the first page: looked for page by page.
        const named = props.threadId
          ? (threads.find((t) => t.id === props.threadId) ?? (await client.findThread(props.threadId)))
          : undefined;
        const chosen = named ?? threads.find((t) => t.main) ?? threads[0];
        if (stopped) return;
        setProfile(p);
        setUnreachable(undefined);
        if (props.threadId && !named) setNotice(`No thread ${props.threadId}; opened ${chosen?.title ?? "none"}`);
        if (chosen) setThread({ id: chosen.id, title: chosen.title });
      } catch (err) {
        if (stopped) return;
        setUnreachable(errorMessage(err));
        timer = setTimeout(load, RETRY_MS);
      }
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [client, props.threadId]);

  const onEvent = useCallback(
    (e: LiveEventFrame) => {
      const data = e.data as Record<string, unknown>;
      if (e.event === "message") {
        const m = data as unknown as ChatMessage;
        if (seen.current.has(m.id)) return;
        seen.current.add(m.id);
        if (m.role === "assistant") setDraft("");
        say(messageLine(m, agentName));
      } else if (e.event === "delta") {
        setDraft((d) => d + String(data.text ?? ""));
      } else if (e.event === "step" && !data.delivered) {
        setDraft("");
      } else if (e.event === "tool_call") {
        say(line(`  ⚙ ${String(data.name)} ${JSON.stringify(data.input).slice(0, 120)}`, "gray"));
      } else if (e.event === "tool_result") {
        const first =
          String(data.content ?? "")
            .split("\n")[0]
            ?.slice(0, 120) ?? "";
        say(line(`  ↳ ${data.isError ? "error" : "ok"}: ${first}`, data.isError ? "red" : "gray"));
      }
    },
    [agentName, say],
  );

  // Follow the thread; the follower reconnects (Last-Event-ID) when the runtime restarts.
  // biome-ignore lint/correctness/useExhaustiveDependencies: re-follow only when the thread changes
  useEffect(() => {
    if (!thread) return;
    const follow = followThread(client, thread.id, onEvent, (s) => setStatus(s));
    client
      .messages(thread.id)
      .then((items) => {
        const fresh = items.filter((m) => !seen.current.has(m.id)).slice(-20);
        for (const m of fresh) seen.current.add(m.id);
        say(line(`── ${thread.title} ──`, "yellow", true), ...fresh.map((m) => messageLine(m, agentName)));
      })
      .catch((err) => setNotice(errorMessage(err)));
    return () => follow.close();
  }, [thread?.id]);

  const showModel = (p: AgentProfile, slot: ModelSlot) => {
    const override = p.overrides[slot];
    return `${SLOT_NAME[slot]} model: ${p.models[slot]} (${override ? `override ${override}` : `empty: uses ${FALLBACK[slot]}`})`;
  };

  const run = async (raw: string) => {
    const command = parseCommand(raw);
    setNotice(undefined);
    try {
      switch (command.kind) {
        case "message": {
          if (!thread || !command.text) return;
          setBusy(true);
          const end = await client.send(thread.id, command.text);
          if (end.status === "error") setNotice(end.error);
          return;
        }
        case "model": {
          if (command.value === undefined) {
            const p = await client.profile();
            setProfile(p);
            say(line(showModel(p, command.slot), "gray"));
            return;
          }
          const p = await client.setModels({ [command.slot]: command.value ?? "" });
          setProfile(p);
          say(line(showModel(p, command.slot), "green"));
          return;
        }
        case "verbose": {
          if (command.value === undefined) {
            say(line(`verbose is ${profile?.verbose ? "on" : "off"} (/verbose on|off)`, "gray"));
            return;
          }
          const p = await client.setVerbose(command.value);
          setProfile(p);
          say(line(`verbose ${p.verbose ? "on" : "off"}`, "green"));
          return;
        }
        case "new": {
          const t = await client.createThread(command.title);
          setThread({ id: t.id, title: t.title });
          return;
        }
        case "threads": {
          if (command.pick !== undefined) {
            // Numbered in list order across every page, as `/threads` and `/threads more` list them.
            const t = await client.threadAt(command.pick);
            if (!t) setNotice(`No thread ${command.pick}; /threads lists them`);
            else setThread({ id: t.id, title: t.title });
            return;
          }
          const cursor = command.more ? listed.current.cursor : undefined;
          if (command.more && !cursor) {
            setNotice("No older threads to list; /threads lists the latest");
            return;
          }
          const before = command.more ? listed.current.count : 0;
          const page = await client.threadPage(cursor);
          listed.current = { cursor: page.nextCursor, count: before + page.items.length };
          say(
            ...page.items.map((t, i) =>
              line(`${before + i + 1}. ${t.title}${t.main ? " (main)" : ""}${t.id === thread?.id ? " ←" : ""}`, "gray"),
            ),
            ...(page.nextCursor ? [line("(older ones: /threads more)", "gray")] : []),
            line("/threads <n> switches", "gray"),
          );
          return;
        }
        case "usage": {
          const usage = await client.usage({ groupBy: command.groupBy });
          say(
            line(`Last 30 days: ${usageText(usage.total)}`, "gray"),
            ...usage.groups.map((g) => line(`  ${g.key}: ${usageText(g)}`, "gray")),
          );
          return;
        }
        case "help":
          say(...COMMANDS.map((c) => line(`${c.usage.padEnd(26)} ${c.help}`, "gray")));
          return;
        case "quit":
          exit();
          return;
        case "unknown":
          setNotice(`Unknown command ${command.text.split(/\s/)[0]}; /help lists them`);
          return;
      }
    } catch (err) {
      setNotice(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  useInput((typed, key) => {
    if (key.ctrl && typed === "c") {
      const now = Date.now();
      if (now - quitArmed.current < QUIT_WINDOW_MS) {
        exit();
        return;
      }
      quitArmed.current = now;
      if (busy && thread) void client.stop(thread.id).catch(() => undefined);
      setNotice(busy ? "Stopping the turn. Ctrl-C again to quit." : "Ctrl-C again to quit.");
      return;
    }
    const submit = () => {
      const text = inputRef.current;
      setInput("");
      if (text.trim()) {
        if (!text.startsWith("/") || text.startsWith("/compact")) say(line(`> ${text}`, "gray"));
        void run(text);
      }
    };
    const complete = () => {
      const { completed, candidates } = completeCommand(inputRef.current);
      setInput(completed);
      if (candidates.length > 1) setNotice(candidates.join("  "));
    };
    if (key.return) return submit();
    if (key.tab) return complete();
    if (key.backspace || key.delete) {
      setInput(inputRef.current.slice(0, -1));
      return;
    }
    if (key.ctrl || key.meta || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow || key.escape) return;
    // Keys typed faster than the terminal is read arrive as one chunk ("/mo\t", "hi\r"): the
    // Tab and Enter inside it still complete and send.
    for (const part of typed.split(/([\t\r])/)) {
      if (part === "\t") complete();
      else if (part === "\r") submit();
      else if (part) setInput(inputRef.current + part.replace(/\n/g, " "));
    }
  });

  const statusText = unreachable
    ? `runtime unreachable at ${props.url}: ${unreachable}; retrying`
    : status === "live"
      ? "live"
      : status === "connecting"
        ? "connecting…"
        : "reconnecting…";

  return h(
    Box,
    { flexDirection: "column", width: columns },
    // Finished lines are printed once above the live area: the terminal's own scrollback scrolls them.
    h(LineStatic, { items: history, render: (item: Line) => lineText(item) }),
    draft ? h(Text, { wrap: "wrap", dimColor: true }, terminalText(`${agentName}: ${draft}…`)) : null,
    h(
      Text,
      { wrap: "truncate-end", color: unreachable ? "red" : status === "live" ? "green" : "yellow" },
      terminalText(
        `[${agentName} · ${thread?.title ?? "no thread"} · ${statusText}${busy ? " · working (Ctrl-C stops)" : ""}]`,
      ),
    ),
    notice ? h(Text, { wrap: "wrap", color: "yellow" }, terminalText(notice)) : null,
    h(Text, { wrap: "wrap" }, terminalText(`> ${input}`), h(Text, { inverse: true }, " ")),
  );
}
