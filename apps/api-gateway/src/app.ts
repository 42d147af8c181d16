import type { IncomingMessage } from "node:http";
import { PROBLEM_CONTENT_TYPE, ProblemError } from "@agentplane/problem-details";
import { IdentitySigner, ServiceClient } from "@agentplane/service-kit";
import { AgentFront } from "./agent-front.ts";
import { RequestAuditor } from "./audit.ts";
import { ClientAddresses, parseTrustedProxies } from "./client-address.ts";
import type { GatewayDeps } from "./deps.ts";
import type { GatewayCore } from "./exchange.ts";
import { FailedAuthentications } from "./failed-authentications.ts";
import { gatewayHealth, type HealthTarget } from "./health.ts";
import { handleRequest, openApiDocument } from "./pipeline.ts";
import { shareRevocations } from "./revocations.ts";
import { RouteTable } from "./route-table.ts";
import { createUpgradeHandler } from "./upgrade.ts";

export interface Gateway {
  fetch(request: Request, env?: { incoming?: IncomingMessage }): Promise<Response>;
  handleUpgrade: ReturnType<typeof createUpgradeHandler>;
  routes: RouteTable;
  /** The agent runtime behind /agent; `agent.connect(...)` once it runs. */
  agent: AgentFront;
  close(): void;
}

/**
 * The gateway: its route table, identity signer, audit recorder and the agent runtime's front,
 * put together once; each request then goes through the stages of `handleRequest` (pipeline.ts),
 * each WebSocket upgrade through `createUpgradeHandler` (upgrade.ts).
 */
export function createGateway(deps: GatewayDeps): Gateway {
  const routes = new RouteTable();
  const signer = new IdentitySigner(deps.keys);
  const auditor = new RequestAuditor(deps.bus, {
    ...(deps.logger ? { logger: deps.logger } : {}),
    // Tenancy names the organization of project-, team- and token-scoped requests for their records.
    ...(deps.targets.tenancy ? { tenancy: new ServiceClient("tenancy", deps.targets.tenancy.fetch, deps.keys) } : {}),
  });
  const agent = new AgentFront({ timeoutMs: deps.agentRuntimeTimeoutMs });
  agent.connect(deps.agentRuntime);
  const revocations = shareRevocations(deps.authenticator, deps.bus, deps.logger);
  let openapi: string | undefined;
  const clientAddresses = new ClientAddresses(
    deps.trustedProxies ? parseTrustedProxies(deps.trustedProxies) : undefined,
  );
  const failedAuthentications = FailedAuthentications.of(deps.rateLimiter);
  const core: GatewayCore = {
    deps,
    routes,
    signer,
    auditor,
    agent,
    clientAddresses,
    failedAuthentications,
    openapi: () => {
      openapi ??= openApiDocument(deps.publicUrl);
      return openapi;
    },
    health: (kind) => gatewayHealth(kind, deps.targets as Record<string, HealthTarget>, deps),
  };

  const handleUpgrade = createUpgradeHandler({
    routes,
    targets: deps.targets,
    authenticator: deps.authenticator,
    signer,
    failedAuthentications,
    limits: deps,
    clientAddress: (req) => clientAddresses.of(req),
    auditor,
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.ingress ? { ingress: deps.ingress } : {}),
    ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}),
  });

  return {
    async fetch(request, env) {
      try {
        return await handleRequest(core, request, env);
      } catch (err) {
        deps.logger?.error({ err }, "gateway error");
        return new Response(JSON.stringify(new ProblemError("internal-error").toBody()), {
          status: 500,
          headers: { "content-type": PROBLEM_CONTENT_TYPE },
        });
      }
    },
    handleUpgrade,
    routes,
    agent,
    close: () => {
      auditor.close();
      agent.close();
      revocations.close();
    },
  };
}
