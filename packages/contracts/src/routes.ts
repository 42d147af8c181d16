import { auditInternalRoutes, auditRoutes } from "./audit/index.ts";
import type { InternalRoute } from "./common/internal-route.ts";
import type { ContractRoute } from "./common/route.ts";
import { connectionsInternalRoutes, connectionsRoutes } from "./connections/index.ts";
import { governanceInternalRoutes, governanceRoutes } from "./governance/index.ts";
import { inferenceRoutes } from "./inference/index.ts";
import { sandboxInternalRoutes, sandboxRoutes } from "./sandbox/index.ts";
import { tenancyInternalRoutes, tenancyRoutes } from "./tenancy/index.ts";

/** Every `/v1` operation, the single source of the gateway's route table and the OpenAPI document. */
export const ALL_ROUTES: readonly ContractRoute[] = [
  ...tenancyRoutes,
  ...sandboxRoutes,
  ...auditRoutes,
  ...governanceRoutes,
  ...inferenceRoutes,
  ...connectionsRoutes,
];

/** Every internal (`/internal/**`) endpoint: not in the `/v1` document, listed for the checks that walk them all. */
export const ALL_INTERNAL_ROUTES: readonly InternalRoute[] = [
  ...tenancyInternalRoutes,
  ...sandboxInternalRoutes,
  ...auditInternalRoutes,
  ...governanceInternalRoutes,
  ...connectionsInternalRoutes,
];

/** Pages outside `/v1` that a service serves through the gateway without authentication. */
export const PUBLIC_PAGES: readonly {
  path: string;
  service: "tenancy";
  methods: readonly string[];
  /** The page receives the browser session cookie (the gateway strips it from every other request). */
  sessionCookie?: boolean;
}[] = [
  { path: "/activate", service: "tenancy", methods: ["GET", "POST"] },
  { path: "/activate/callback", service: "tenancy", methods: ["GET"] },
  // The console's sign-in with the identity provider (authorization code + PKCE) and its return.
  { path: "/sign-in/oidc", service: "tenancy", methods: ["GET"] },
  { path: "/sign-in/oidc/callback", service: "tenancy", methods: ["GET"] },
  // The sign-in device flow's approval page: it reads the browser session itself (see the gateway).
  { path: "/device", service: "tenancy", methods: ["GET", "POST"], sessionCookie: true },
];

/**
 * Pages outside `/v1` that a service serves through the gateway behind the same Bearer
 * authentication: the platform's MCP endpoints (Streamable HTTP, stateless).
 */
export const AUTHENTICATED_PAGES: readonly { path: string; service: "connections"; methods: readonly string[] }[] = [
  { path: "/mcp", service: "connections", methods: ["GET", "POST", "DELETE"] },
  { path: "/projects/{projectId}/mcp", service: "connections", methods: ["GET", "POST", "DELETE"] },
];
