import {
  AUDIT_RECORDED,
  type AuditRecorded,
  auditPrincipal,
  internalResolveOrgRoute,
  type Principal,
  RESOURCE_ORG_HEADER,
} from "@agentplane/contracts";
import { BufferedPublisher, type Bus, eventId } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import { callInternal, type Logger, type ServiceClient, servicePrincipal } from "@agentplane/service-kit";
import { LRUCache } from "lru-cache";
import { responseHeader } from "./response-headers.ts";

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function shouldAudit(method: string, status: number): boolean {
  return MUTATING.has(method) || status === 401 || status === 403;
}

/** What the routine-answer rule may ask of an answer, each read only when the rule needs it. */
export interface AnswerFacts {
  /** Whether the request carried any credential (a token, a session cookie). */
  credentials(): boolean;
  /** The OAuth error code the service named for its refusal (`x-agentplane-oauth-error`). */
  oauthError(): string | undefined;
}

/** RFC 8628 §3.5: the answers a device's poll gets while the person has not decided yet. */
const UNDECIDED_POLL_ERRORS: ReadonlySet<string> = new Set(["authorization_pending", "slow_down"]);

/**
 * Answers that are the normal course of a protocol, not a change nor a refused attempt, and so
 * are not recorded though their method or status would be:
 * - the device flow's token endpoint refusing a poll because the person has not decided yet
 *   (400: `authorization_pending`, `slow_down`; RFC 8628 §3.5). A client polls every few seconds
 *   until the person decides; what matters is recorded elsewhere: the flow's start, the decision
 *   on the approval page, and the token handed out (the poll that succeeds, and
 *   `api_token.created`). Its other refusals (`expired_token`, `access_denied`, `invalid_grant`,
 *   a malformed request) end the flow or are mistakes, and are recorded.
 * - the current browser session asked for with no credential at all (401): how the console learns
 *   that nobody is signed in. With a token or a session cookie, a 401 is recorded as ever.
 */
export function isRoutineAnswer(operationId: string, status: number, answer: AnswerFacts): boolean {
  if (operationId === "pollDeviceAuthorization") {
    return status === 400 && UNDECIDED_POLL_ERRORS.has(answer.oauthError() ?? "");
  }
  if (operationId === "getCurrentSession") return status === 401 && !answer.credentials();
  return false;
}

/** The most specific id in the path names the target: `/v1/projects/{projectId}/sandboxes/{sandboxId}` → sandbox. */
export function targetOf(params: Record<string, string>): { targetType?: string; targetId?: string } {
  const names = Object.keys(params);
  const last = names[names.length - 1];
  if (!last) return {};
  return { targetType: last.replace(/Id$/, ""), targetId: params[last]! };
}

export interface RequestAudit {
  principal: Principal | undefined;
  operationId: string;
  params: Record<string, string>;
  status: number;
  requestId: string;
  ip: string | undefined;
  userAgent: string | undefined;
  method: string;
  path: string;
  /** The service's answer: a created organization's id is read from it. */
  response?: Response | undefined;
  /** The organization the service named (its resource-org header), when read before the answer was built. */
  resourceOrg?: string | undefined;
}

const GATEWAY = servicePrincipal("api-gateway");
/** Path parameters tenancy can map to an organization, most specific scope first. */
const RESOLVABLE = ["projectId", "teamId", "tokenId", "invitationId"] as const;

/**
 * The organization of a project, team, API token or invitation, asked of tenancy once and then
 * cached: a resource never changes organization. Unknown ids are remembered briefly (a bad id in a
 * flood of requests costs one lookup per few seconds); a failed lookup is not remembered.
 */
export class OrgResolver {
  private readonly tenancy: ServiceClient;
  private readonly known = new LRUCache<string, { orgId: string | null }>({ max: 50_000 });
  private readonly unknown = new LRUCache<string, true>({ max: 10_000, ttl: 5_000 });
  private readonly inFlight = new Map<string, Promise<string | undefined>>();

  constructor(tenancy: ServiceClient) {
    this.tenancy = tenancy;
  }

  async orgOf(resourceId: string): Promise<string | undefined> {
    const hit = this.known.get(resourceId);
    if (hit) return hit.orgId ?? undefined;
    if (this.unknown.has(resourceId) || !/^[a-z]+_[0-9a-z]{1,40}$/.test(resourceId)) return undefined;
    let pending = this.inFlight.get(resourceId);
    if (!pending) {
      pending = this.lookup(resourceId).finally(() => this.inFlight.delete(resourceId));
      this.inFlight.set(resourceId, pending);
    }
    return pending;
  }

  private async lookup(resourceId: string): Promise<string | undefined> {
    try {
      const { orgId } = await callInternal(this.tenancy, internalResolveOrgRoute, {
        principal: GATEWAY,
        params: { resourceId },
      });
      this.known.set(resourceId, { orgId: orgId ?? null });
      return orgId;
    } catch (err) {
      if (err instanceof ProblemError && err.status === 404) this.unknown.set(resourceId, true);
      throw err;
    }
  }
}

/**
 * Publishes one `audit.recorded` event per audited request. Publishing never fails or delays the
 * request: the organization is resolved (when the path and the principal do not name it) and the
 * event published after the answer, and while the bus is unavailable events wait in the shared
 * bounded in-memory buffer and are retried (the gateway has no database of its own for an outbox).
 * A record whose organization cannot be known (an unknown token's 401, an id no service found)
 * stays without one: it belongs to the installation's trail.
 */
export class RequestAuditor {
  private readonly publisher: BufferedPublisher;
  private readonly resolver: OrgResolver | undefined;
  private readonly logger: Logger | undefined;
  private readonly resolving = new Set<Promise<void>>();
  /** The organization services named for ids of paths and of created resources (ids never move). */
  private readonly knownOrgs = new LRUCache<string, string>({ max: 100_000 });

  constructor(bus: Bus, options: { logger?: Logger; maxBuffer?: number; tenancy?: ServiceClient } = {}) {
    this.publisher = new BufferedPublisher(bus, {
      ...(options.logger ? { logger: options.logger } : {}),
      maxBuffer: options.maxBuffer ?? 100_000,
    });
    this.resolver = options.tenancy ? new OrgResolver(options.tenancy) : undefined;
    this.logger = options.logger;
  }

  /** Records waiting for `recordSoon`'s turn. */
  private soon: RequestAudit[] = [];

  /**
   * Records the request once the current turn is over, so the answer goes out first. For an answer
   * whose record needs nothing more from it: not a 201 (whose body is read for the created id),
   * and with the organization it named (if any) already taken out as `resourceOrg`.
   */
  recordSoon(audit: RequestAudit): void {
    if (this.soon.push(audit) === 1) setImmediate(() => this.flushSoon());
  }

  private flushSoon(): void {
    const batch = this.soon;
    this.soon = [];
    for (const audit of batch) this.record(audit);
  }

  record(audit: RequestAudit): void {
    const { principal } = audit;
    const outcome = audit.status === 401 || audit.status === 403 ? "denied" : audit.status >= 400 ? "error" : "success";
    // The path's organization, else the one the service named for the resource it acted on, else
    // the one a service named earlier for an id of the path (a request refused before the service
    // looked at its resource, such as a bad body, names none).
    const named =
      audit.resourceOrg ?? (audit.response ? responseHeader(audit.response, RESOURCE_ORG_HEADER) : undefined);
    // Only an answer that acted on the path's resources proves they belong to the organization
    // named: a refusal names the caller's organization whatever ids its path holds, and learning
    // from it would let one organization file another's later records in its own trail.
    if (named && audit.status >= 200 && audit.status < 300) this.learn(audit.params, named);
    const orgId = audit.params.orgId ?? named ?? principal?.orgId ?? this.learned(audit.params);
    const projectId = audit.params.projectId ?? principal?.projectId;
    const event: AuditRecorded = {
      id: eventId(),
      ...(orgId ? { orgId } : {}),
      ...(projectId ? { projectId } : {}),
      principal: auditPrincipal(principal),
      action: audit.operationId,
      source: "request",
      ...targetOf(audit.params),
      targets: audit.params,
      outcome,
      status: audit.status,
      requestId: audit.requestId,
      ...(audit.ip ? { ip: audit.ip } : {}),
      ...(audit.userAgent ? { userAgent: audit.userAgent } : {}),
      method: audit.method,
      path: audit.path,
      time: new Date().toISOString(),
    };
    const created = audit.status === 201 && audit.response ? audit.response.clone() : undefined;
    if (orgId) {
      this.publish(event);
      // The id of what was created belongs to that organization from now on.
      if (created) this.track(this.learnCreated(created, orgId));
      return;
    }
    const scoped = RESOLVABLE.map((name) => audit.params[name]).find((id) => id !== undefined);
    if (!created && (!scoped || !this.resolver)) {
      this.publish(event);
      return;
    }
    this.track(
      this.resolveOrg(created, scoped).then((resolved) =>
        this.publish(resolved ? { ...event, orgId: resolved } : event),
      ),
    );
  }

  private track(work: Promise<void>): void {
    const task = work.finally(() => this.resolving.delete(task));
    this.resolving.add(task);
  }

  /** Path ids a resource keeps for life (not a user's id: a user belongs to several organizations). */
  private static ids(params: Record<string, string>): string[] {
    return Object.entries(params)
      .filter(([name]) => (name === "id" || name.endsWith("Id")) && name !== "orgId" && name !== "userId")
      .map(([, value]) => value);
  }

  private learn(params: Record<string, string>, orgId: string): void {
    for (const id of RequestAuditor.ids(params)) this.knownOrgs.set(id, orgId);
  }

  private learned(params: Record<string, string>): string | undefined {
    for (const id of RequestAuditor.ids(params)) {
      const orgId = this.knownOrgs.get(id);
      if (orgId) return orgId;
    }
    return undefined;
  }

  private async learnCreated(created: Response, orgId: string): Promise<void> {
    const body = (await created.json().catch(() => undefined)) as { id?: unknown } | undefined;
    if (typeof body?.id === "string" && !body.id.startsWith("org_")) this.knownOrgs.set(body.id, orgId);
  }

  private async resolveOrg(created: Response | undefined, scoped: string | undefined): Promise<string | undefined> {
    try {
      if (created) {
        // A new organization's own id, or the organization a created resource names.
        const body = (await created.json().catch(() => undefined)) as { id?: unknown; orgId?: unknown } | undefined;
        if (typeof body?.orgId === "string") return body.orgId;
        if (typeof body?.id === "string" && body.id.startsWith("org_")) return body.id;
      }
      return scoped && this.resolver ? await this.resolver.orgOf(scoped) : undefined;
    } catch (err) {
      // The record is still published, in the installation's trail rather than lost.
      this.logger?.warn({ err: (err as Error).message, resourceId: scoped }, "organization of an audit record unknown");
      return undefined;
    }
  }

  private publish(event: AuditRecorded): void {
    this.publisher.publish(AUDIT_RECORDED, event, { id: event.id, time: event.time });
  }

  /** Waits until every record whose organization was being resolved has been handed to the publisher. */
  async settled(): Promise<void> {
    this.flushSoon();
    while (this.resolving.size > 0) await Promise.allSettled([...this.resolving]);
  }

  /** Events still waiting for the bus (for health output and tests). */
  get pending(): number {
    return this.publisher.pending + this.resolving.size;
  }

  close(): void {
    this.flushSoon();
    this.publisher.close();
  }
}
