/** The terminal UI's commands; anything else typed is a message (and `/compact` goes to the agent). */
export const COMMANDS = [
  { name: "/model", usage: "/model [id|-]", help: "show or set the main model override (- clears)" },
  { name: "/heartbeat-model", usage: "/heartbeat-model [id|-]", help: "show or set the heartbeat model override" },
  { name: "/cron-model", usage: "/cron-model [id|-]", help: "show or set the scheduled-run model override" },
  { name: "/verbose", usage: "/verbose on|off", help: "show every step and tool call, or only final answers" },
  { name: "/compact", usage: "/compact [focus]", help: "summarize the older messages of this thread now" },
  { name: "/new", usage: "/new [title]", help: "start a new thread" },
  {
    name: "/threads",
    usage: "/threads [n|more]",
    help: "list the latest threads (more: the next older ones); with a number, switch to it",
  },
  {
    name: "/usage",
    usage: "/usage [day|model|source]",
    help: "tokens, cost and meeting minutes of the last 30 days",
  },
  { name: "/help", usage: "/help", help: "this list" },
  { name: "/quit", usage: "/quit", help: "leave (Ctrl-C twice does too)" },
] as const;

export type ModelSlot = "main" | "heartbeat" | "cron";
export type UsageGrouping = "day" | "model" | "source";

export type Command =
  | { kind: "message"; text: string }
  | { kind: "model"; slot: ModelSlot; value: string | null | undefined }
  | { kind: "verbose"; value: boolean | undefined }
  | { kind: "new"; title: string | undefined }
  | { kind: "threads"; pick: number | undefined; more: boolean }
  | { kind: "usage"; groupBy: UsageGrouping }
  | { kind: "help" }
  | { kind: "quit" }
  | { kind: "unknown"; text: string };

const SLOTS: Record<string, ModelSlot> = { "/model": "main", "/heartbeat-model": "heartbeat", "/cron-model": "cron" };

/** What a line typed in the composer asks for. `/compact` stays a message: the agent runs it. */
export function parseCommand(line: string): Command {
  const text = line.trim();
  if (!text.startsWith("/")) return { kind: "message", text };
  const [name = "", ...rest] = text.split(/\s+/);
  const arg = rest.join(" ").trim();
  const slot = SLOTS[name];
  if (slot) return { kind: "model", slot, value: arg === "" ? undefined : arg === "-" ? null : arg };
  switch (name) {
    case "/compact":
      return { kind: "message", text };
    case "/verbose":
      return { kind: "verbose", value: arg === "on" ? true : arg === "off" ? false : undefined };
    case "/new":
      return { kind: "new", title: arg || undefined };
    case "/threads":
      return { kind: "threads", pick: /^\d+$/.test(arg) ? Number(arg) : undefined, more: arg === "more" };
    case "/usage":
      return { kind: "usage", groupBy: arg === "model" || arg === "source" ? arg : "day" };
    case "/help":
      return { kind: "help" };
    case "/quit":
    case "/exit":
      return { kind: "quit" };
    default:
      return { kind: "unknown", text };
  }
}

/** Tab: the command the typed prefix names, or the longest common prefix of several. */
export function completeCommand(input: string): { completed: string; candidates: string[] } {
  if (!input.startsWith("/") || /\s/.test(input)) return { completed: input, candidates: [] };
  const candidates = COMMANDS.map((c) => c.name).filter((n) => n.startsWith(input));
  if (candidates.length === 1) return { completed: `${candidates[0]} `, candidates };
  if (candidates.length === 0) return { completed: input, candidates };
  let prefix = candidates[0] ?? input;
  for (const c of candidates) while (!c.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return { completed: prefix.length > input.length ? prefix : input, candidates };
}
