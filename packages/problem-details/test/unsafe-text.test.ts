import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { createOnError, validationHook } from "../src/index.ts";

function app() {
  const a = new OpenAPIHono({ defaultHook: validationHook });
  a.onError(createOnError());
  a.openapi(
    createRoute({
      method: "post",
      path: "/things/{id}",
      request: {
        params: z.object({ id: z.string() }),
        query: z.object({ q: z.string().optional() }),
        body: {
          content: {
            "application/json": {
              schema: z.object({ name: z.string(), labels: z.record(z.string(), z.string()).optional() }),
            },
          },
        },
      },
      responses: { 201: { description: "created" } },
    }),
    (c) => c.json({ ok: true }, 201),
  );
  return a;
}

async function post(path: string, body: string) {
  const res = await app().request(path, { method: "POST", body, headers: { "content-type": "application/json" } });
  return { status: res.status, body: (await res.json()) as { errors?: { pointer: string; message: string }[] } };
}

describe("text no store accepts is a 400 naming the field", () => {
  it("accepts ordinary text, astral characters included", async () => {
    expect((await post("/things/a", JSON.stringify({ name: "Ada 😀 ü" }))).status).toBe(201);
  });

  it("refuses NUL in a body string, naming it", async () => {
    const res = await post("/things/a", '{"name":"a\\u0000b"}');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ pointer: "/body/name", message: "must not contain a NUL character" }]);
  });

  it("refuses a lone surrogate in a nested value and in a key", async () => {
    const res = await post("/things/a", '{"name":"ok","labels":{"k":"\\udc00","\\ud800x":"v"}}');
    expect(res.status).toBe(400);
    expect(res.body.errors?.map((e) => e.pointer)).toEqual(["/body/labels/k", "/body/labels/\ud800x"]);
    expect(res.body.errors?.[0]?.message).toMatch(/lone surrogates/);
  });

  it("refuses NUL in a query value and a path parameter", async () => {
    expect((await post("/things/a?q=x%00", JSON.stringify({ name: "n" }))).body.errors?.[0]?.pointer).toBe("/query/q");
    const param = await post("/things/a%00", JSON.stringify({ name: "n" }));
    expect(param.status).toBe(400);
    expect(param.body.errors?.[0]?.pointer).toBe("/param/id");
  });
});
