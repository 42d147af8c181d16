import { describe, expect, it } from "vitest";
import { inProcessRequest } from "../src/in-process-request.ts";

const body = new TextEncoder().encode(JSON.stringify({ model: "m", n: 1 }));
const make = (b: Uint8Array | null = body, signal?: AbortSignal) =>
  inProcessRequest("http://tenancy.internal", {
    method: "POST",
    path: "/v1/things?x=1",
    headers: { "content-type": "application/json", "x-request-id": "r1" },
    body: b,
    ...(signal ? { signal } : {}),
  });

describe("the request a service answering in process receives", () => {
  it("is a Request with the forwarded method, URL, headers and signal", () => {
    const controller = new AbortController();
    const request = make(body, controller.signal);
    expect(request).toBeInstanceOf(Request);
    expect(request.method).toBe("POST");
    expect(request.url).toBe("http://tenancy.internal/v1/things?x=1");
    expect(request.headers.get("x-request-id")).toBe("r1");
    expect(request.signal).toBe(controller.signal);
    // What it does not answer itself, a real Request does.
    expect(request.redirect).toBe("manual");
    expect(request.mode).toBe("cors");
  });

  it("reads its body once, in every form, and then refuses as fetch does", async () => {
    const json = make();
    expect(json.bodyUsed).toBe(false);
    expect(await json.json()).toEqual({ model: "m", n: 1 });
    expect(json.bodyUsed).toBe(true);
    await expect(json.text()).rejects.toThrow(TypeError);
    expect(await make().text()).toBe('{"model":"m","n":1}');
    expect(new Uint8Array(await make().arrayBuffer())).toEqual(body);
    expect(await make().bytes()).toEqual(body);
    await expect(make(new TextEncoder().encode("{nope")).json()).rejects.toThrow(SyntaxError);
  });

  it("hands out its body as a stream, or a clone, through a real Request", async () => {
    const streamed = make();
    const chunks: Uint8Array[] = [];
    for await (const chunk of streamed.body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString()).toBe('{"model":"m","n":1}');
    expect(streamed.bodyUsed).toBe(true);
    const original = make();
    expect(await original.clone().json()).toEqual({ model: "m", n: 1 });
    expect(await original.json()).toEqual({ model: "m", n: 1 });
    expect(make(null).body).toBeNull();
  });
});
