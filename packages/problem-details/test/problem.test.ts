import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { createOnError, ProblemError, setProblemBase, validationHook } from "../src/index.ts";

function app() {
  const a = new OpenAPIHono({ defaultHook: validationHook });
  a.onError(createOnError());
  a.openapi(
    createRoute({
      method: "post",
      path: "/things",
      request: { body: { content: { "application/json": { schema: z.strictObject({ name: z.string().min(1) }) } } } },
      responses: { 201: { description: "created" } },
    }),
    (c) => c.json({ ok: true }, 201),
  );
  a.get("/boom", () => {
    throw new Error("secret internals");
  });
  a.get("/gone", () => {
    throw new ProblemError("conflict", { detail: "already there", headers: { "x-extra": "1" } });
  });
  return a;
}

describe("problem details", () => {
  setProblemBase("https://problems.example/p/");

  it("turns validation failures into 400 with a pointer per field, unknown fields included", async () => {
    const res = await app().request("/things", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "", extra: 1 }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    const body = (await res.json()) as { type: string; errors: { pointer: string }[] };
    expect(body.type).toBe("https://problems.example/p/validation-failed");
    expect(body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(["/body/extra", "/body/name"]);
  });

  it("words the schema's own checks for people, and keeps a message the schema words itself", async () => {
    const a = new OpenAPIHono({ defaultHook: validationHook });
    const schema = z.strictObject({
      name: z.string().min(1),
      title: z.string().max(5),
      code: z.string().length(2),
      tags: z.array(z.string()).min(1).max(2),
      count: z.number().int().min(0).max(10),
      ratio: z.number().gt(0),
      slug: z.string().min(3, "a slug is 3 characters or more"),
      kind: z.string(),
      size: z.number(),
    });
    a.openapi(
      createRoute({
        method: "post",
        path: "/things",
        request: { body: { content: { "application/json": { schema } } } },
        responses: { 201: { description: "created" } },
      }),
      (c) => c.json({ ok: true }, 201),
    );
    const res = await a.request("/things", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        name: "",
        title: "toolong",
        code: "abc",
        tags: ["a", "b", "c"],
        count: -1,
        ratio: 0,
        slug: "x",
        size: "big",
      }),
    });
    const body = (await res.json()) as { errors: { pointer: string; message: string }[] };
    expect(Object.fromEntries(body.errors.map((e) => [e.pointer, e.message]))).toEqual({
      "/body/name": "Required",
      "/body/title": "At most 5 characters",
      "/body/code": "Exactly 2 characters",
      "/body/tags": "At most 2 items",
      "/body/count": "0 or more",
      "/body/ratio": "More than 0",
      "/body/slug": "a slug is 3 characters or more",
      "/body/kind": "Required",
      "/body/size": "Invalid input: expected number, received string",
    });
  });

  it("answers malformed JSON with 400 malformed-json", async () => {
    const res = await app().request("/things", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { type: string }).type).toMatch(/\/malformed-json$/);
  });

  it("hides unexpected errors behind a 500 without internals", async () => {
    const res = await app().request("/boom");
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("secret internals");
    expect((JSON.parse(text) as { type: string }).type).toMatch(/\/internal-error$/);
  });

  it("keeps the status, detail and headers of a thrown ProblemError", async () => {
    const res = await app().request("/gone");
    expect(res.status).toBe(409);
    expect(res.headers.get("x-extra")).toBe("1");
    const body: unknown = await res.json();
    expect(body).toMatchObject({ status: 409, title: "Conflict", detail: "already there", instance: "/gone" });
  });
});
