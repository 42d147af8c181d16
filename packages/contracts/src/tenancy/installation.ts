import { z } from "@hono/zod-openapi";
import { defineRoute } from "../common/route.ts";
import { pathParam, Timestamp } from "../common/schemas.ts";
import { jsonBody } from "./shared.ts";

export const Installation = z
  .object({
    status: z.enum(["unactivated", "activated"]),
    version: z.string(),
    installationId: z.string(),
    activatedAt: Timestamp.optional(),
    oidcSignIn: z
      .boolean()
      .optional()
      .describe("True when people sign in to the console with the installation's identity provider"),
  })
  .openapi("Installation");
export type Installation = z.infer<typeof Installation>;

/** RFC 8628 device authorization response, in camelCase. */
export const ActivationSession = z
  .object({
    sessionId: z.string(),
    /** What the operator types on the verification page, `ABCD-EFGH`. */
    userCode: z.string(),
    verificationUri: z.string(),
    verificationUriComplete: z.string(),
    /** Seconds until the session expires. */
    expiresIn: z.number().int(),
    /** Seconds to wait between polls; polling faster answers `slow_down`. */
    interval: z.number().int(),
  })
  .openapi("ActivationSession");

/**
 * A poll result. `slow_down` comes with status 200 (not RFC 8628's 400) so clients read one shape;
 * `token` is present exactly once, on the first poll after approval.
 */
export const ActivationPoll = z
  .object({
    status: z.enum(["pending", "approved", "denied", "expired", "slow_down"]),
    interval: z.number().int(),
    expiresIn: z.number().int().optional(),
    /** The first owner's API token; only in the first `approved` answer. */
    token: z.string().optional(),
    orgId: z.string().optional(),
    userId: z.string().optional(),
  })
  .openapi("ActivationPoll");
export type ActivationPoll = z.infer<typeof ActivationPoll>;

const tags = ["Installation"];

export const getInstallationRoute = defineRoute(
  { service: "tenancy", access: "public" },
  {
    operationId: "getInstallation",
    description: "Whether the installation is activated, its id and version. Needs no token.",
    method: "get",
    path: "/v1/installation",
    tags,
    summary: "Installation status, version and id",
    responses: { 200: jsonBody(Installation, "The installation") },
  },
);

export const startActivationRoute = defineRoute(
  { service: "tenancy", access: "public" },
  {
    operationId: "startActivation",
    description:
      "Starts the device flow: returns a session id, a user code and the page where an operator approves with the setup code printed at first start (or by signing in with the identity provider). 409 once activated. Needs no token.",
    method: "post",
    path: "/v1/installation/activation",
    tags,
    summary: "Start the device flow that activates the installation (409 once activated)",
    responses: { 201: jsonBody(ActivationSession, "Started") },
  },
);

export const pollActivationRoute = defineRoute(
  { service: "tenancy", access: "public" },
  {
    operationId: "pollActivation",
    description:
      "Polls the device flow no faster than its `interval`: pending, `slow_down`, expired, or approved with the owner's token, returned exactly once.",
    method: "get",
    path: "/v1/installation/activation/{sessionId}",
    tags,
    summary: "Poll the device flow",
    request: { params: z.object({ sessionId: pathParam("sessionId", "act_01jc2x3y4z5a6b7c8d9e0f1g2h") }) },
    responses: { 200: jsonBody(ActivationPoll, "The session state") },
  },
);

export const installationRoutes = [getInstallationRoute, startActivationRoute, pollActivationRoute] as const;
