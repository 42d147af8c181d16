import { EventEmitter } from "node:events";
import { createRequire } from "node:module";
import { type Authorizer, DecisionCache } from "@agentplane/service-kit";
import type { SafeFetcher } from "@agentplane/service-kit/outbound";
import type { Ajv, ValidateFunction } from "ajv";
import type { Kysely } from "kysely";
import { LRUCache } from "lru-cache";
import type { ConnectionsContext } from "../../context.ts";
import type { ConnectionsDb } from "../../db/schema/index.ts";
import { proxyAuthorizer } from "../../services/proxy-authorizer.ts";
import { RemoteClientPool } from "../mcp-client/remote.ts";
import { DescriptionParser } from "../openapi/description-parser.ts";
import type { ConnectorTool } from "../openapi/tools.ts";
import { CallAuditWriter } from "./call-audit.ts";
import { ConnectorIndex } from "./hot-index.ts";
import { withoutRegexKeywords } from "./regex-free-schema.ts";
import { type ConnectorRow, fromJsonb } from "./store.ts";

/**
 * How long an allow of `tool:call` is reused for the same caller, tool and context. Governance
 * reaches every enforcement point within 2 s of a policy change; a new forbid reaches calls at most
 * this much later than decisions.
 */
export const DECISION_FRESH_MS = 1_000;

export interface LoadedTools {
  tools: ConnectorTool[];
  byName: Map<string, ConnectorTool>;
  validators: Map<string, ValidateFunction>;
  /** Serialized views of this tool set (a REST list body, an MCP list), by settings version and viewer. */
  views: LRUCache<string, object>;
}

/**
 * What the connector verbs share within one service instance: the SSRF-safe fetcher, pooled MCP
 * clients, parsed tool sets by connector version (a 500-tool list is parsed once, not per request)
 * with their compiled argument validators, and the local change signal the MCP endpoints listen to.
 */
export class ConnectorRuntime {
  readonly fetcher: SafeFetcher;
  readonly pool: RemoteClientPool;
  /** Emits `changed` with a project id after a promotion, visibility change, create or delete. */
  readonly changes = new EventEmitter();
  /** Connector rows, entry settings and credentials the hot paths read, kept briefly. */
  readonly index = new ConnectorIndex();
  /**
   * tenancy's answers for the tool call and list paths: the service's shared cache (3 s, as a
   * `RemoteAuthorizer` keeps them, also when tenancy answers in process; see `proxyAuthorizer`).
   */
  readonly authorizer: Authorizer;
  /** governance's `tool:call` answers: an allow reused for 1 s, denies asked every time. */
  readonly decisions = new DecisionCache({ callerService: "connections", ttlMs: DECISION_FRESH_MS });
  /** Tool call audit records, committed before each call answers (group commit across concurrent calls). */
  readonly audit: CallAuditWriter;
  /** OpenAPI descriptions become tools on a thread of their own, off the event loop. */
  readonly descriptions = new DescriptionParser();
  private ajvInstance: Ajv | undefined;
  /** Ajv (CommonJS) is loaded when the first tool input is checked, not when the service starts. */
  private get ajv(): Ajv {
    if (!this.ajvInstance) {
      const { Ajv: AjvClass } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
      // Own properties only: an argument named `constructor` the caller left out is missing, not
      // the function every object inherits.
      this.ajvInstance = new AjvClass({ strict: false, validateFormats: false, allErrors: true, ownProperties: true });
    }
    return this.ajvInstance;
  }
  private readonly toolSets = new LRUCache<string, LoadedTools>({ max: 500 });

  constructor(ctx: ConnectionsContext) {
    this.audit = new CallAuditWriter(ctx);
    this.authorizer = proxyAuthorizer(ctx);
    this.fetcher = ctx.outbound;
    this.pool = new RemoteClientPool(this.fetcher);
    this.changes.setMaxListeners(0);
  }

  /** The connector's current tools, read and parsed once per (connector, tools hash). */
  async tools(db: Kysely<ConnectionsDb>, row: Pick<ConnectorRow, "id" | "tools_hash">): Promise<LoadedTools> {
    const key = `${row.id}:${row.tools_hash}`;
    const cached = this.toolSets.get(key);
    if (cached) return cached;
    const stored = await db
      .selectFrom("connectors")
      .select(["tools", "tools_hash"])
      .where("id", "=", row.id)
      .executeTakeFirst();
    const tools = stored ? (fromJsonb<ConnectorTool[]>(stored.tools) ?? []) : [];
    const loaded: LoadedTools = {
      tools,
      byName: new Map(tools.map((t) => [t.name, t])),
      validators: new Map(),
      views: new LRUCache<string, object>({ max: 32 }),
    };
    // Cached under the hash actually read, so a promotion in between is never cached as the old version.
    if (stored) this.toolSets.set(`${row.id}:${stored.tools_hash}`, loaded);
    return loaded;
  }

  /** A derived view of the tool set, built once per key (settings version and viewer). */
  view<T extends object>(loaded: LoadedTools, key: string, build: () => T): T {
    let value = loaded.views.get(key) as T | undefined;
    if (!value) {
      value = build();
      loaded.views.set(key, value);
    }
    return value;
  }

  validator(loaded: LoadedTools, tool: ConnectorTool): ValidateFunction {
    let validate = loaded.validators.get(tool.name);
    if (!validate) {
      try {
        validate = this.ajv.compile(withoutRegexKeywords(tool.inputSchema) as Record<string, unknown>);
      } catch {
        // A remote server's schema this validator cannot compile (or nested past the stack): the
        // server validates it instead.
        validate = this.ajv.compile({});
      }
      loaded.validators.set(tool.name, validate);
    }
    return validate;
  }

  /** A project's connectors changed on this replica: forget what was read of them. */
  invalidate(projectId: string): void {
    this.index.invalidate(projectId);
  }

  /** Invalidates, and tells the MCP endpoints' open streams that the project's tool lists changed. */
  announce(projectId: string): void {
    this.invalidate(projectId);
    this.changes.emit("changed", projectId);
  }

  async close(): Promise<void> {
    await this.descriptions.close();
    await this.audit.close();
    await this.pool.close();
  }
}
