import type {
  AgentProfile,
  ChatMessage,
  CreateScheduleBody,
  CreateWebhookSubscriptionBody,
  HeartbeatSettings,
  MemoryNote,
  RuntimeUsage,
  RuntimeUsageFigures,
  RuntimeUsageGroupBy,
  Schedule,
  ScheduleRun,
  TeamChatChannel,
  TeamChatState,
  Thread,
  UpdateModelsBody,
  UpdateScheduleBody,
  UpdateWebhookSubscriptionBody,
  WebhookRun,
  WebhookSubscription,
} from "@agentplane/contracts/runtime";
import { readSseFrames } from "./sse.ts";

export type {
  AgentProfile,
  ChatMessage,
  HeartbeatSettings,
  MemoryNote,
  RuntimeUsage,
  RuntimeUsageFigures,
  Schedule,
  ScheduleRun,
  TeamChatChannel,
  TeamChatState,
  Thread,
  WebhookRun,
  WebhookSubscription,
};
export type UsageGroupBy = RuntimeUsageGroupBy;

export interface ReceiverState {
  enabled: boolean;
  subscriptions: WebhookSubscription[];
}

/** A problem+json answer of the runtime (or of the gateway in front of it). */
export interface Problem {
  title?: string;
  status?: number;
  detail?: string;
  errors?: Array<{ pointer?: string; message: string }>;
}

export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;
  readonly problem: Problem;
  constructor(status: number, problem: Problem) {
    super(problemText(problem, status));
    this.status = status;
    this.problem = problem;
  }
}

/** The runtime could not be reached at all (refused, reset, DNS). */
export class UnreachableError extends Error {
  override readonly name = "UnreachableError";
}

/** What to show a person for any failure of a call. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function problemText(problem: Problem, status: number): string {
  const head = problem.detail ?? problem.title ?? `HTTP ${status}`;
  const fields = (problem.errors ?? []).map((e) => (e.pointer ? `${e.pointer}: ${e.message}` : e.message));
  return fields.length > 0 ? `${head} (${fields.join("; ")})` : head;
}

export interface ThreadPage {
  items: Thread[];
  /** Present while older threads remain. */
  nextCursor?: string;
}

export interface TurnEnd {
  status: "done" | "error";
  error?: string;
}

/**
 * The runtime's HTTP API for its own web and terminal UIs. `base` ends with a slash: `/` when the
 * runtime serves the page itself, `/agent/api/` behind the gateway, `http://localhost:3003/` in
 * the terminal UI.
 */
export class RuntimeClient {
  readonly base: string;
  readonly #fetch: typeof fetch;

  constructor(base: string, fetchImpl: typeof fetch = (...args) => fetch(...args)) {
    this.base = base.endsWith("/") ? base : `${base}/`;
    this.#fetch = fetchImpl;
  }

  url(path: string): string {
    return `${this.base}${path.replace(/^\//, "")}`;
  }

  async raw(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<Response> {
    let res: Response;
    try {
      res = await this.#fetch(this.url(path), {
        method,
        ...(signal ? { signal } : {}),
        headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new UnreachableError(`The agent runtime cannot be reached (${(err as Error).message})`);
    }
    if (!res.ok) {
      const text = await res.text().catch(() => "");
      let problem: Problem = { status: res.status };
      try {
        problem = JSON.parse(text) as Problem;
      } catch {
        if (text) problem = { status: res.status, detail: text.slice(0, 300) };
      }
      throw new ApiError(res.status, problem);
    }
    return res;
  }

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.raw(method, path, body);
    if (res.status === 204) return undefined as T;
    return (await res.json()) as T;
  }

  profile = () => this.call<AgentProfile>("GET", "agents/profile");
  setVerbose = (verbose: boolean) => this.call<AgentProfile>("PATCH", "agents/verbose", { verbose });
  setModels = (body: UpdateModelsBody) => this.call<AgentProfile>("PATCH", "agents/models", body);
  heartbeat = () => this.call<HeartbeatSettings>("GET", "agents/heartbeat");

  /**
   * A page of threads (the main one first, then the latest active); `cursor` is the last page's
   * `nextCursor`, `limit` 1–200 (the runtime's default 50).
   */
  threadPage = (cursor?: string, limit?: number) => {
    const params = new URLSearchParams();
    if (cursor) params.set("cursor", cursor);
    if (limit) params.set("limit", String(limit));
    const search = params.toString();
    return this.call<ThreadPage>("GET", `agents/threads${search ? `?${search}` : ""}`);
  };
  /** The first page: the main thread and the latest active ones. */
  threads = async () => (await this.threadPage()).items;

  /** The first thread, in list order, that `test` accepts (given its 0-based position); pages of 200. */
  async #seekThread(test: (t: Thread, index: number) => boolean): Promise<Thread | undefined> {
    let cursor: string | undefined;
    let index = 0;
    do {
      const page = await this.threadPage(cursor, 200);
      for (const t of page.items) if (test(t, index++)) return t;
      cursor = page.nextCursor;
    } while (cursor);
    return undefined;
  }
  /** A thread by id, looked for page by page; undefined when there is no such web thread. */
  findThread = (threadId: string) => this.#seekThread((t) => t.id === threadId);
  /** The n-th thread (1 is the first) in list order, however many pages down; undefined past the last. */
  threadAt = (n: number) => (n < 1 ? Promise.resolve(undefined) : this.#seekThread((_, index) => index === n - 1));
  createThread = (title?: string) => this.call<Thread>("POST", "agents/threads", title ? { title } : {});
  messages = async (threadId: string) =>
    (await this.call<{ items: ChatMessage[] }>("GET", `agents/threads/${enc(threadId)}/messages`)).items;
  stop = (threadId: string) => this.call<{ stopped: boolean }>("POST", `agents/threads/${enc(threadId)}/stop`);

  /** Posts a message and waits for the turn's end; what it says arrives on the thread's live stream. */
  async send(threadId: string, text: string): Promise<TurnEnd> {
    const res = await this.raw("POST", `agents/threads/${enc(threadId)}/messages`, { text });
    if (!res.body) return { status: "done" };
    for await (const frame of readSseFrames(res.body)) {
      if (frame.event === "done") return { status: "done" };
      if (frame.event === "error") {
        const problem = JSON.parse(frame.data) as Problem;
        return { status: "error", error: problemText(problem, problem.status ?? 502) };
      }
    }
    return { status: "done" };
  }

  receiver = () => this.call<ReceiverState>("GET", "agents/webhooks");
  setReceiver = (enabled: boolean) => this.call<ReceiverState>("PUT", "agents/webhooks/enabled", { enabled });
  createSubscription = (body: Partial<CreateWebhookSubscriptionBody> & { name: string }) =>
    this.call<WebhookSubscription>("POST", "agents/webhook-subscriptions", body);
  updateSubscription = (name: string, body: UpdateWebhookSubscriptionBody) =>
    this.call<WebhookSubscription>("PATCH", `agents/webhook-subscriptions/${enc(name)}`, body);
  deleteSubscription = (name: string) => this.call<void>("DELETE", `agents/webhook-subscriptions/${enc(name)}`);
  subscriptionRuns = async (name: string) =>
    (await this.call<{ items: WebhookRun[] }>("GET", `agents/webhook-subscriptions/${enc(name)}/runs?limit=20`)).items;

  schedules = async () => (await this.call<{ items: Schedule[] }>("GET", "agents/schedules")).items;
  createSchedule = (body: Partial<CreateScheduleBody> & { name: string; prompt: string }) =>
    this.call<Schedule>("POST", "agents/schedules", body);
  updateSchedule = (id: string, body: UpdateScheduleBody) =>
    this.call<Schedule>("PATCH", `agents/schedules/${enc(id)}`, body);
  deleteSchedule = (id: string) => this.call<void>("DELETE", `agents/schedules/${enc(id)}`);
  runSchedule = (id: string) => this.call<ScheduleRun>("POST", `agents/schedules/${enc(id)}/run`);
  scheduleRuns = async (id: string) =>
    (await this.call<{ items: ScheduleRun[] }>("GET", `agents/schedules/${enc(id)}/runs`)).items;

  memory = async (query: string) =>
    (await this.call<{ items: MemoryNote[] }>("GET", `agents/memory${query ? `?q=${encodeURIComponent(query)}` : ""}`))
      .items;
  forget = (id: string) => this.call<void>("DELETE", `agents/memory/${enc(id)}`);
  /** Shares a note with the team (team members' turns find it), or makes it the owner's only. */
  shareNote = (id: string, shared: boolean) => this.call<MemoryNote>("PATCH", `agents/memory/${enc(id)}`, { shared });

  /** Tokens, cost and meeting audio minutes over [from, to) (RFC 3339), grouped by day, model or source. */
  usage = (query: { from?: string; to?: string; groupBy?: UsageGroupBy } = {}) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value) params.set(key, value);
    const search = params.toString();
    return this.call<RuntimeUsage>("GET", `agents/usage${search ? `?${search}` : ""}`);
  };

  teamChat = () => this.call<TeamChatState>("GET", "agents/team-chat");
  channels = async () => (await this.call<{ data: TeamChatChannel[] }>("GET", "agents/team-chat/channels")).data;
  /** Forgets a paired owner; the runtime logs a new pairing code (409 when CHAT_OWNER_ID names the owner). */
  resetOwner = () => this.call<TeamChatState>("DELETE", "agents/team-chat/owner");
  updateChannel = async (id: string, body: { linked?: boolean; main?: boolean }) =>
    (await this.call<{ data: TeamChatChannel[] }>("PATCH", `agents/team-chat/channels/${enc(id)}`, body)).data;
}

const enc = encodeURIComponent;
