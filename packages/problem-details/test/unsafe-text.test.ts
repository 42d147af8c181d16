import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { createOnError, findUnsafeText, validationHook } from "../src/index.ts";

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

describe("findUnsafeText on deeply nested values", () => {
  const DEPTH = 100_000;

  it("walks 100,000 nested arrays and objects without overflowing the stack", () => {
    // What JSON.parse builds from a 200 KB body, well inside the 1 MiB limit.
    const arrays = JSON.parse(`${"[".repeat(DEPTH)}"a\\u0000b"${"]".repeat(DEPTH)}`);
    const foundInArrays = findUnsafeText(arrays, ["body"]);
    expect(foundInArrays).toHaveLength(1);
    expect(foundInArrays[0]?.path).toHaveLength(DEPTH + 1);
    expect(foundInArrays[0]?.path.slice(0, 3)).toEqual(["body", 0, 0]);
    expect(foundInArrays[0]?.message).toBe("must not contain a NUL character");

    const objects = JSON.parse(`${'{"k":'.repeat(DEPTH)}"fine"${"}".repeat(DEPTH)}`);
    expect(findUnsafeText(objects)).toEqual([]);
  });

  it("reports in document order, field names before what they hold, and stops at 20", () => {
    const value = {
      a: ["ok", "\u0000", { "\ud800": "\u0000" }],
      b: "\udc00",
      "c\u0000": ["x"],
    };
    expect(findUnsafeText(value).map((f) => [f.path, f.message.startsWith("field name")])).toEqual([
      [["a", 1], false],
      [["a", 2, "\ud800"], true],
      [["a", 2, "\ud800"], false],
      [["b"], false],
      [["c\u0000"], true],
    ]);
    expect(findUnsafeText(Array.from({ length: 50 }, () => "\u0000"))).toHaveLength(20);
  });
});
