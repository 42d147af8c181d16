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
