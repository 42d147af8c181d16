import type { OpenAPIHono } from "@hono/zod-openapi";

export type RuntimeApp = OpenAPIHono;
