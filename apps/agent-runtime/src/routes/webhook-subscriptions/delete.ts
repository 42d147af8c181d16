import { deleteWebhookSubscriptionRoute } from "@agentplane/contracts/runtime";
import type { RuntimeDeps } from "../../deps.ts";
import type { RuntimeApp } from "../types.ts";

export function registerDeleteWebhookSubscription(app: RuntimeApp, deps: RuntimeDeps): void {
  app.openapi(deleteWebhookSubscriptionRoute, async (c) => {
    await deps.registry.remove(c.req.valid("param").name);
    return c.body(null, 204);
  });
}
