import type { AuthorizeResponse, Principal } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { type Authorizer, noteResourceOrg, type ServiceClient } from "@agentplane/service-kit";
import { LRUCache } from "lru-cache";

export interface CallerScope {
  orgId: string;
  projectId: string;
}

interface Page<T> {
  items: T[];
  nextCursor?: string;
}

const LONG_FORM = "/v1/projects/{projectId}/llm/...";

/**
 * Who pays and which policies apply: the project of the call and its organization. The short
 * form takes the project of a project-restricted or sandbox token, else the caller's only project.
 */
export class CallerResolver {
  private readonly authorizer: Authorizer;
  private readonly tenancy: ServiceClient | undefined;
  // ttlResolution 0: ages are read from the clock on each lookup, with no timer set per millisecond.
  private readonly onlyProject = new LRUCache<string, Promise<string>>({ max: 10_000, ttl: 30_000, ttlResolution: 0 });
  /** Allowed decisions for a few seconds, as RemoteAuthorizer does: one lookup per burst of calls. */
  private readonly allowed = new LRUCache<string, CallerScope>({ max: 10_000, ttl: 3_000, ttlResolution: 0 });

  constructor(authorizer: Authorizer, tenancy: ServiceClient | undefined) {
    this.authorizer = authorizer;
    this.tenancy = tenancy;
  }

  /** `nameWith`: how the caller names a project on this route, for the 400 when it must. */
  async resolve(
    principal: Principal,
    explicitProject: string | undefined,
    requestId?: string,
    nameWith = LONG_FORM,
  ): Promise<CallerScope> {
    const projectId =
      explicitProject ??
      principal.projectId ??
      (await this.only(principal, requestId).catch((err: unknown) => {
        throw err instanceof ProjectCount ? several(err.count, nameWith) : err;
      }));
    if (principal.type === "sandbox") {
      // Tenancy does not know sandboxes: a sandbox token acts in its own project only.
      if (principal.projectId !== projectId || !principal.orgId) {
        throw new ProblemError("not-found", { detail: `Project ${projectId} was not found` });
      }
      return { orgId: principal.orgId, projectId };
    }
    const key = `${principalKey(principal)}\u0000${projectId}`;
    const hit = this.allowed.get(key);
    if (hit) {
      noteResourceOrg(hit.orgId);
      return hit;
    }
    const decision: AuthorizeResponse = await this.authorizer.check({ principal, permission: "llm:invoke", projectId });
    if (decision.decision === "not_found" || !decision.orgId) {
      throw new ProblemError("not-found", { detail: `Project ${projectId} was not found` });
    }
    if (decision.decision === "forbidden") {
      throw new ProblemError("forbidden", { detail: "This needs the permission llm:invoke (role developer or above)" });
    }
    const scope = { orgId: decision.orgId, projectId };
    this.allowed.set(key, scope);
    return scope;
  }

  private only(principal: Principal, requestId?: string): Promise<string> {
    const key = `${principal.type}:${principal.id}`;
    let hit = this.onlyProject.get(key);
    if (!hit) {
      hit = this.listOnly(principal, requestId);
      this.onlyProject.set(key, hit);
      hit.catch(() => this.onlyProject.delete(key));
    }
    return hit;
  }

  private async listOnly(principal: Principal, requestId?: string): Promise<string> {
    if (!this.tenancy) throw new ProjectCount(0);
    const opts = { principal, ...(requestId ? { requestId } : {}) };
    const orgs = await this.tenancy.request<Page<{ id: string }>>("GET", "/v1/orgs?limit=3", opts);
    const projects: string[] = [];
    for (const org of orgs.items) {
      const page = await this.tenancy.request<Page<{ id: string }>>(
        "GET",
        `/v1/orgs/${encodeURIComponent(org.id)}/projects?limit=3`,
        opts,
      );
      projects.push(...page.items.map((p) => p.id));
      if (projects.length > 1) break;
    }
    if (projects.length !== 1) throw new ProjectCount(projects.length);
    return projects[0] as string;
  }
}

/** The verifier hands out the same principal object for a token it verified before. */
const principalKeys = new WeakMap<Principal, string>();
function principalKey(principal: Principal): string {
  let key = principalKeys.get(principal);
  if (key === undefined) {
    key = JSON.stringify(principal);
    principalKeys.set(principal, key);
  }
  return key;
}

/** The caller has no project, or several: which one is meant must be named (how depends on the route). */
class ProjectCount extends Error {
  readonly count: number;
  constructor(count: number) {
    super(`the caller can use ${count} projects`);
    this.count = count;
  }
}

function several(count: number, nameWith: string): ProblemError {
  return new ProblemError("bad-request", {
    detail:
      count === 0
        ? `The caller has no project to bill this call to; create one and use ${nameWith}`
        : `The caller can use several projects; name one with ${nameWith}`,
  });
}
