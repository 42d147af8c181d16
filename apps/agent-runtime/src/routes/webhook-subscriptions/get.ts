import { getWebhookSubscriptionRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import { toSubscription } from "../../webhooks/registry.ts";
import type { RuntimeApp } from "../types.ts";

export function registerGetWebhookSubscription(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(getWebhookSubscriptionRoute, (c) =>
    c.json(toSubscription(deps.registry.require(c.req.valid("param").name)), 200),
  );
}
