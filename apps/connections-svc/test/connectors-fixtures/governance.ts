import { randomBytes } from "node:crypto";
import type { Principal } from "@agentplane/contracts";
import type { Database } from "@agentplane/db";
import type { Bus } from "@agentplane/events";
import {
  type Authorizer,
  type InternalKeys,
  inProcessFetch,
  ServiceClient,
  signIdentity,
  silentLogger,
} from "@agentplane/service-kit";
import { createGovernanceService, type GovernanceService } from "../../../governance-svc/src/index.ts";

/** The tool a project policy forbids, and the rule's id (the Cedar `@id`). */
export const DENIED_TOOL = "deleteAccount";
export const DENY_RULE = "rule-no-account-deletes";

/**
 * The project's tool policy: every tool call permitted except `deleteAccount`. Without the permit,
 * binding a `tool:call` policy would deny every other tool (default deny within the bound set).
 */
export const TOOL_POLICY = `@id("allow-tool-calls")
permit(principal, action == Action::"tool:call", resource);
@id("${DENY_RULE}")
forbid(principal, action == Action::"tool:call", resource) when { context.tool == "${DENIED_TOOL}" };`;

export interface RealGovernance {
  service: GovernanceService;
  /** governance-svc's internal API as connections-svc calls it. */
  client: ServiceClient;
  /** The master key credentials are sealed under (`AGENTPLANE_SECRET_KEY`). */
  secretKey: Uint8Array;
  /** Calls governance's public API as `as`. */
  call(method: string, path: string, as: Principal, body?: unknown): Promise<Response>;
  close(): Promise<void>;
}

/** The real governance-svc on the shared database and bus, deciding with tenancy's authorizer. */
export async function startGovernance(deps: {
  database: Database;
  bus: Bus;
  keys: InternalKeys;
  authorizer: Authorizer;
}): Promise<RealGovernance> {
  const secretKey = randomBytes(32);
  const service = await createGovernanceService({
    ...deps,
    logger: silentLogger(),
    config: { secretKey, driftIntervalMs: 0, heartbeatMs: 500 },
  });
  const call = async (method: string, path: string, as: Principal, body?: unknown) => {
    const headers = new Headers({
      "x-agentplane-identity": await signIdentity(deps.keys, as, { audience: "governance" }),
    });
    if (body !== undefined) headers.set("content-type", "application/json");
    return service.fetch(
      new Request(`http://governance.test${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      }),
    );
  };
  return {
    service,
    secretKey,
    client: new ServiceClient("governance", inProcessFetch(service), deps.keys),
    call,
    close: () => service.close(),
  };
}

async function created(res: Response, what: string): Promise<{ id: string }> {
  if (res.status !== 201) throw new Error(`creating ${what}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
}

/**
 * A project's governance set-up through the public API: a bearer credential holding `token`, and
 * the tool policy bound to the project. Returns the credential's id.
 */
export async function governProject(
  governance: RealGovernance,
  owner: Principal,
  projectId: string,
  token: string,
): Promise<{ credentialId: string; policyId: string; bindingId: string }> {
  const credential = await created(
    await governance.call("POST", `/v1/projects/${projectId}/credentials`, owner, {
      name: "upstream-api",
      kind: "http-bearer",
      token,
    }),
    "credential",
  );
  const policy = await created(
    await governance.call("POST", `/v1/projects/${projectId}/policies`, owner, { name: "tools", cedar: TOOL_POLICY }),
    "policy",
  );
  const binding = await created(
    await governance.call("POST", `/v1/projects/${projectId}/policy-bindings`, owner, { policyId: policy.id }),
    "binding",
  );
  return { credentialId: credential.id, policyId: policy.id, bindingId: binding.id };
}
