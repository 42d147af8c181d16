import {
  type FindCredentialsResponse,
  internalFindCredentialsRoute,
  internalResolveCredentialRoute,
} from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { callInternal, type ServiceClient, servicePrincipal } from "@agentplane/service-kit";
import { LRUCache } from "lru-cache";
import type { CloudACredential, ProviderSettings } from "../config.ts";

const SELF = servicePrincipal("inference");

/** The governance credential kinds that stand in for the installation's provider variables. */
export const PROVIDER_CREDENTIAL_KINDS = ["cloud-a-bearer", "cloud-a-keys", "cloud-b-key"] as const;

/** The providers of one project: the installation's, with the project's own credentials over them. */
export interface ProjectProviders {
  settings: ProviderSettings;
  /** The governance credential id serving each provider family, when it is the project's own. */
  cloudACredentialId?: string;
  cloudBCredentialId?: string;
}

export interface ProjectCredentialsOptions {
  /** How long one project's lookup is reused (default 10 s): a new, rotated or deleted credential applies after at most this. */
  ttlMs?: number;
}

/**
 * A project credential of a provider's kind overrides the installation's credential for that
 * project (`cloud-a-bearer` before `cloud-a-keys`, as the environment prefers the bearer token;
 * `cloud-b-key` with its resource name). Looked up in governance and resolved there, then kept
 * briefly per project: governance publishes no fan-out event a second consumer could watch, so a
 * short TTL is what bounds a change's delay. Endpoint overrides stay installation-wide.
 */
export class ProjectCredentials {
  private readonly governance: ServiceClient | undefined;
  private readonly installation: ProviderSettings;
  private readonly cache: LRUCache<string, Promise<ProjectProviders>>;

  constructor(
    governance: ServiceClient | undefined,
    installation: ProviderSettings,
    options: ProjectCredentialsOptions = {},
  ) {
    this.governance = governance;
    this.installation = installation;
    // ttlResolution 0: ages are read from the clock on each lookup, with no timer set per millisecond.
    this.cache = new LRUCache({ max: 10_000, ttl: options.ttlMs ?? 10_000, ttlResolution: 0 });
  }

  /** The providers for calls billed to `projectId`; a governance failure is a 503, never a silent fallback. */
  forProject(projectId: string, requestId?: string): Promise<ProjectProviders> {
    if (!this.governance) return Promise.resolve({ settings: this.installation });
    let hit = this.cache.get(projectId);
    if (!hit) {
      hit = this.load(this.governance, projectId, requestId);
      this.cache.set(projectId, hit);
      hit.catch(() => this.cache.delete(projectId));
    }
    return hit;
  }

  /** Forgets what is cached (all projects, or one), e.g. after a credential changed. */
  invalidate(projectId?: string): void {
    if (projectId) this.cache.delete(projectId);
    else this.cache.clear();
  }

  private async load(governance: ServiceClient, projectId: string, requestId?: string): Promise<ProjectProviders> {
    const opts = { principal: SELF, ...(requestId ? { requestId } : {}) };
    let found: FindCredentialsResponse;
    try {
      found = await callInternal(governance, internalFindCredentialsRoute, {
        ...opts,
        body: { projectId, kinds: [...PROVIDER_CREDENTIAL_KINDS] },
      });
    } catch (err) {
      throw unavailable(err);
    }
    const byKind = new Map(found.items.map((item) => [item.kind, item]));
    const resolve = async (id: string) => {
      try {
        return await callInternal(governance, internalResolveCredentialRoute, {
          ...opts,
          body: { credentialId: id, projectId },
        });
      } catch (err) {
        throw unavailable(err);
      }
    };
    const settings: ProviderSettings = { ...this.installation };
    const out: ProjectProviders = { settings };
    const cloudA = byKind.get("cloud-a-bearer") ?? byKind.get("cloud-a-keys");
    if (cloudA) {
      const { fields } = await resolve(cloudA.id);
      let credential: CloudACredential | undefined;
      if (cloudA.kind === "cloud-a-bearer" && fields.token) credential = { kind: "bearer", token: fields.token };
      else if (fields.accessKeyId && fields.secretAccessKey) {
        credential = {
          kind: "sigv4",
          accessKeyId: fields.accessKeyId,
          secretAccessKey: fields.secretAccessKey,
          sessionToken: fields.sessionToken,
        };
      }
      if (credential) {
        settings.cloudA = credential;
        out.cloudACredentialId = cloudA.id;
      }
    }
    const cloudB = byKind.get("cloud-b-key");
    if (cloudB) {
      const { fields } = await resolve(cloudB.id);
      if (fields.key) {
        settings.cloudBKey = fields.key;
        if (fields.resourceName) settings.cloudBResource = fields.resourceName;
        out.cloudBCredentialId = cloudB.id;
      }
    }
    return out;
  }
}

function unavailable(err: unknown): ProblemError {
  if (err instanceof ProblemError && err.status < 500) return err;
  return new ProblemError("service-unavailable", {
    detail: "The project's provider credentials could not be read from governance; retry later",
    headers: { "retry-after": "5" },
  });
}
