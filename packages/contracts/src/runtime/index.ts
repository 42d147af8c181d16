export * from "./agent.ts";
export * from "./console.ts";
export * from "./live.ts";
export * from "./routes.ts";
export * from "./schedules.ts";
export * from "./team-chat.ts";
export * from "./threads.ts";
export * from "./webhooks.ts";
