import { createOnError, ProblemError, problemJson, validationHook } from "@agentplane/problem-details";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { RuntimeDeps } from "./deps.ts";
import { registerGetProfile } from "./routes/agent/get-profile.ts";
import { registerUpdateModels } from "./routes/agent/update-models.ts";
import { registerUpdateVerbose } from "./routes/agent/update-verbose.ts";
import {
  registerCreateSchedule,
  registerDeleteSchedule,
  registerGetSchedule,
  registerListSchedules,
  registerUpdateSchedule,
} from "./routes/schedules/crud.ts";
import { registerListScheduleRuns, registerRunSchedule } from "./routes/schedules/runs.ts";
import { registerCreateThread } from "./routes/threads/create.ts";
import { registerFollowThread } from "./routes/threads/follow.ts";
import { registerListThreads } from "./routes/threads/list.ts";
import { registerListMessages } from "./routes/threads/list-messages.ts";
import { registerPostMessage } from "./routes/threads/post-message.ts";
import {
  registerCreateSubscription,
  registerDeleteSubscription,
  registerGetSubscription,
  registerUpdateSubscription,
} from "./routes/webhook-subscriptions/crud.ts";
import { registerListRuns } from "./routes/webhook-subscriptions/list-runs.ts";
import { registerGetReceiver, registerSetReceiverEnabled } from "./routes/webhooks/get-receiver.ts";
import { registerReceiveWebhook } from "./routes/webhooks/receive.ts";

/** The runtime's HTTP API. No I/O here: the database, model client and queue come in as deps. */
export function createRuntimeApp(deps: RuntimeDeps): OpenAPIHono {
  const app = new OpenAPIHono({ defaultHook: validationHook });
  app.onError(createOnError(deps.logger));
  // Unknown paths (a trailing slash included) are problems too, like every other error.
  app.notFound((c) =>
    problemJson(c, new ProblemError("not-found", { detail: `No route for ${c.req.method} ${c.req.path}` })),
  );
  app.get("/health", (c) => c.json({ status: "ok", provider: deps.config.provider }));

  registerGetProfile(app, deps);
  registerUpdateVerbose(app, deps);
  registerUpdateModels(app, deps);

  registerListThreads(app, deps);
  registerCreateThread(app, deps);
  registerListMessages(app, deps);
  registerPostMessage(app, deps);
  registerFollowThread(app, deps);

  registerGetReceiver(app, deps);
  registerSetReceiverEnabled(app, deps);
  registerReceiveWebhook(app, deps);
  registerCreateSubscription(app, deps);
  registerGetSubscription(app, deps);
  registerUpdateSubscription(app, deps);
  registerDeleteSubscription(app, deps);
  registerListRuns(app, deps);

  registerListSchedules(app, deps);
  registerCreateSchedule(app, deps);
  registerGetSchedule(app, deps);
  registerUpdateSchedule(app, deps);
  registerDeleteSchedule(app, deps);
  registerRunSchedule(app, deps);
  registerListScheduleRuns(app, deps);

  app.doc31("/openapi.json", { openapi: "3.1.0", info: { title: "Agentplane agent runtime", version: "1" } });
  return app;
}
