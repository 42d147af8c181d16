import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUFFERED_BYTES, responseOf } from "../src/tunnel/h2-body.ts";

/**
 * How an answer on a tunnel's HTTP/2 stream becomes the proxy's Response, against a real HTTP/2
 * server: small complete answers whole, a watch-like answer streaming as it is written, a reset
 * before the end an error.
 */
describe("tunnel answers as Responses", () => {
  let server: http2.Http2Server;
  let session: http2.ClientHttp2Session;
  const handlers = new Map<string, (stream: http2.ServerHttp2Stream) => void>();

  beforeAll(async () => {
    server = http2.createServer();
    server.on("stream", (stream, headers) => handlers.get(String(headers[":path"]))?.(stream));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    session.close();
    await new Promise((r) => server.close(r));
  });

  const ask = (path: string) =>
    new Promise<{ res: Response | Promise<Response>; stream: http2.ClientHttp2Stream }>((resolve, reject) => {
      const stream = session.request({ ":path": path });
      stream.once("response", (head) =>
        resolve({ res: responseOf(stream, head, "GET", () => new Error("reset early")), stream }),
      );
      stream.once("error", reject);
    });

  it("answers a body written at once whole, declared or not, and keeps status and headers", async () => {
    handlers.set("/once", (s) => {
      s.respond({ ":status": 200, "content-type": "application/json" });
      s.end('{"kind":"List"}');
    });
    handlers.set("/declared", (s) => {
      s.respond({ ":status": 201, "content-length": "6" });
      s.write("ab");
      setTimeout(() => s.end("cdef"), 30);
    });
    const once = await (await ask("/once")).res;
    expect(once.status).toBe(200);
    expect(once.headers.get("content-type")).toBe("application/json");
    expect(await once.text()).toBe('{"kind":"List"}');
    // A declared small length is waited for, even across turns.
    const declared = await (await ask("/declared")).res;
    expect(declared.status).toBe(201);
    expect(await declared.text()).toBe("abcdef");
  });

  it("streams an answer whose end comes later (a watch) from the bytes received so far", async () => {
    let finish: () => void = () => {};
    handlers.set("/watch", (s) => {
      s.respond({ ":status": 200 });
      s.write('{"type":"ADDED"}\n');
      finish = () => s.end('{"type":"DELETED"}\n');
    });
    const res = await (await ask("/watch")).res;
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("ADDED")) text += new TextDecoder().decode((await reader.read()).value);
    // The Response came before the answer ended.
    finish();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toBe('{"type":"ADDED"}\n{"type":"DELETED"}\n');
  });

  it("streams more than BUFFERED_BYTES, byte for byte", async () => {
    const big = Buffer.alloc(BUFFERED_BYTES * 3, 7);
    handlers.set("/big", (s) => {
      s.respond({ ":status": 200, "content-length": String(big.length) });
      s.end(big);
    });
    const res = await (await ask("/big")).res;
    expect(Buffer.from(await res.arrayBuffer()).equals(big)).toBe(true);
  });

  it("rejects with the reset error when the stream is reset before a small body is whole", async () => {
    handlers.set("/reset", (s) => {
      s.on("error", () => {});
      s.respond({ ":status": 200, "content-length": "100" });
      s.write("partial");
      setTimeout(() => s.close(http2.constants.NGHTTP2_INTERNAL_ERROR), 20);
    });
    const { res, stream } = await ask("/reset");
    stream.on("error", () => {});
    await expect(res).rejects.toThrow(/reset early/);
  });
});
