import { z } from "@hono/zod-openapi";
import { defineRoute } from "../common/route.ts";
import { ResourceName } from "../common/schemas.ts";
import { jsonBody, jsonRequest } from "./shared.ts";

/**
 * Sign-in device authorization (RFC 8628) for clients without a browser of their own, such as the
 * CLI: the client starts a flow, a person approves it on the installation's `/device` page, and the
 * client's poll then returns a new API token of that person. Names are camelCase like the rest of
 * `/v1`; the poll's errors carry RFC 8628's `error` codes.
 */
export const DEVICE_TOKEN_TTL_SECONDS = 30 * 86_400;

/** The RFC 8628 §3.5 error codes a poll can answer (400, in the problem's `error` member). */
export const DEVICE_POLL_ERRORS = ["authorization_pending", "slow_down", "expired_token", "access_denied"] as const;
export type DevicePollError = (typeof DEVICE_POLL_ERRORS)[number];

export const StartDeviceAuthorizationBody = z
  .strictObject({
    clientName: ResourceName.optional().openapi({
      description:
        "Which client asks, shown on the approval page and used as the new token's name (e.g. `agentplane CLI on build-7`)",
      example: "agentplane CLI on build-7",
    }),
  })
  .openapi("StartDeviceAuthorization");

export const DeviceAuthorization = z
  .object({
    deviceCode: z.string().describe("The client's secret for polling; stored hashed"),
    userCode: z.string().describe("What the person confirms on the approval page, `BCDF-GHJK`"),
    verificationUri: z.string(),
    verificationUriComplete: z.string().describe("The approval page with the user code filled in"),
    expiresIn: z.number().int().describe("Seconds until both codes expire"),
    interval: z.number().int().describe("Seconds to wait between polls; faster answers `slow_down`"),
  })
  .openapi("DeviceAuthorization");
export type DeviceAuthorization = z.infer<typeof DeviceAuthorization>;

export const PollDeviceAuthorizationBody = z
  .strictObject({
    deviceCode: z.string().min(1).max(128).describe("The `deviceCode` the flow started with"),
  })
  .openapi("PollDeviceAuthorization");

export const DeviceToken = z
  .object({
    token: z.string().describe("The new API token (`apl_…`), returned once"),
    tokenId: z.string().describe("The new token's id (`tok_…`), to revoke it with"),
    tokenType: z.literal("Bearer").describe("How to present it: `Authorization: Bearer <token>`"),
    expiresAt: z
      .string()
      .describe("When the token expires: 30 days after approval, or when the approving token does if sooner"),
  })
  .openapi("DeviceToken");
export type DeviceToken = z.infer<typeof DeviceToken>;

const tags = ["Identity"];

export const startDeviceAuthorizationRoute = defineRoute(
  { service: "tenancy", access: "public" },
  {
    operationId: "startDeviceAuthorization",
    description:
      "Starts a sign-in device flow (RFC 8628 §3.1) on an activated installation: returns the device code to poll with, the user code and the approval page. Needs no token. 409 while the installation is not activated (use the activation flow).",
    method: "post",
    path: "/v1/auth/device",
    tags,
    summary: "Start a sign-in device flow (needs no token)",
    request: {
      body: { required: false, content: { "application/json": { schema: StartDeviceAuthorizationBody } } },
    },
    responses: { 201: jsonBody(DeviceAuthorization, "Started") },
  },
);

export const pollDeviceAuthorizationRoute = defineRoute(
  { service: "tenancy", access: "public" },
  {
    operationId: "pollDeviceAuthorization",
    description:
      "Polls a sign-in device flow (RFC 8628 §3.4) no faster than its `interval`. Until approved it answers 400 with `error` set to `authorization_pending`, `slow_down` (the interval grows by 5 s for good), `expired_token` or `access_denied`; once approved, a new API token of the approving person (their role, named after the client, expiring in 30 days), exactly once.",
    method: "post",
    path: "/v1/auth/device/token",
    tags,
    summary: "Poll a sign-in device flow for its token",
    request: jsonRequest(PollDeviceAuthorizationBody),
    responses: { 200: jsonBody(DeviceToken, "Approved: the new token, returned once") },
  },
);

export const deviceAuthRoutes = [startDeviceAuthorizationRoute, pollDeviceAuthorizationRoute] as const;
