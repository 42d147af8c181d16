// The limits a user holds, walked through the public API like the tenant ones (object-limits.ts):
// the organizations they own, their open browser sessions and their personal API tokens (minted by
// approving a device sign-in on the `/device` page), and an organization's API tokens minted the
// same way by a token bound to it.
import { expect } from "vitest";
import { type Answer, type Json, LIMIT, type LimitedKind, send } from "./object-limits.ts";

/** The user limits the suites set through the setting. */
export const USER_LIMITS_SETTING = ["organizations", "sessions", "personal-api-tokens", "api-tokens"]
  .map((kind) => `${kind}=${LIMIT}`)
  .join(",");

/** A device sign-in approved with `approverToken` on the approval page, then polled for its token. */
async function deviceSignIn(base: string, approverToken: string, clientName: string): Promise<Answer> {
  const started = await send(base, "", "POST", "/v1/auth/device", { clientName });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const page = await fetch(`${base}/device`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      userCode: started.body.userCode as string,
      decision: "approve",
      token: approverToken,
    }).toString(),
  });
  const html = await page.text();
  if (page.status !== 200) {
    return { status: page.status, contentType: page.headers.get("content-type") ?? "", body: { html } };
  }
  const polled = await send(base, "", "POST", "/v1/auth/device/token", { deviceCode: started.body.deviceCode });
  expect(polled.status, JSON.stringify(polled.body)).toBe(200);
  return { status: 201, contentType: polled.contentType, body: { id: polled.body.tokenId } };
}

/** The approval page at the limit: a 409 page that names the holder, the limit and the setting, no token. */
const expectRefusedPage = (holds: string, kind: string) => (answer: Answer) => {
  expect(answer.status, String(answer.body.html)).toBe(409);
  expect(answer.contentType).toMatch(/^text\/html/);
  const html = String(answer.body.html);
  expect(html).toContain(`${holds} ${LIMIT} `);
  expect(html).toContain(`OBJECT_LIMITS=${kind}=&#60;n&#62;`);
  expect(html).not.toMatch(/apl_[0-9a-z]{26}_/);
};

/**
 * The three kinds the owner holds: a bootstrapped owner already owns the first organization
 * ("Default") and keeps the bootstrap token among their live personal tokens. Then the API tokens
 * of that organization, minted by device sign-ins approved with a token bound to it.
 */
export async function userLimitedKinds(base: string, ownerToken: string): Promise<LimitedKind[]> {
  const call = (method: string, path: string, body?: unknown) => send(base, ownerToken, method, path, body);
  const items = async (path: string) => (await call("GET", `${path}?limit=200`)).body.items as Json[];
  const [first] = await items("/v1/orgs");
  const orgId = first!.id as string;
  const bound = await call("POST", `/v1/orgs/${orgId}/api-tokens`, { name: "approver" });
  expect(bound.status, JSON.stringify(bound.body)).toBe(201);
  const live = (tokens: Json[]) =>
    tokens.filter((t) => !t.revokedAt && (!t.expiresAt || Date.parse(t.expiresAt as string) > Date.now())).length;
  return [
    {
      kind: "organizations",
      preexisting: 1,
      create: (i) => call("POST", "/v1/orgs", { name: `owned-${i}` }),
      remove: (id) => call("DELETE", `/v1/orgs/${id}`),
      held: async () => (await items("/v1/orgs")).filter((o) => o.role === "owner").length,
    },
    {
      kind: "sessions",
      create: async () => {
        const opened = await call("POST", "/v1/auth/sessions");
        const session = opened.body.session as Json | undefined;
        return session ? { ...opened, body: { ...opened.body, id: session.id } } : opened;
      },
      remove: (id) => call("DELETE", `/v1/auth/sessions/${id}`),
      held: async () => (await items("/v1/auth/sessions")).length,
    },
    {
      kind: "personal-api-tokens",
      preexisting: 1,
      create: (i) => deviceSignIn(base, ownerToken, `laptop-${i}`),
      remove: (id) => call("DELETE", `/v1/api-tokens/${id}`),
      held: async () => live(await items("/v1/auth/api-tokens")),
      expectRefused: expectRefusedPage("This user already holds", "personal-api-tokens"),
    },
    {
      kind: "api-tokens",
      // The approver itself is the organization's first token.
      preexisting: 1,
      create: (i) => deviceSignIn(base, bound.body.token as string, `runner-${i}`),
      remove: (id) => call("DELETE", `/v1/api-tokens/${id}`),
      held: async () => live(await items(`/v1/orgs/${orgId}/api-tokens`)),
      expectRefused: expectRefusedPage("This organization already holds", "api-tokens"),
    },
  ];
}
