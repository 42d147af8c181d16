import { describe, expect, it } from "vitest";
import { recordHeaders } from "../src/record-headers.ts";

const record = () => ({ "x-request-id": "r1", accept: "application/json", "content-type": "text/plain" });

describe("the headers of a request a service answers in process", () => {
  it("are Headers that read names in any case and iterate sorted, as Headers do", () => {
    const headers = recordHeaders(record());
    const reference = new Headers(record());
    expect(headers).toBeInstanceOf(Headers);
    expect(headers.get("X-Request-Id")).toBe("r1");
    expect(headers.get("missing")).toBeNull();
    expect(headers.has("ACCEPT")).toBe(true);
    expect(headers.has("missing")).toBe(false);
    expect([...headers]).toEqual([...reference]);
    expect([...headers.keys()]).toEqual([...reference.keys()]);
    expect([...headers.values()]).toEqual([...reference.values()]);
    const seen: string[] = [];
    headers.forEach((value, key, parent) => {
      expect(parent).toBe(headers);
      seen.push(`${key}=${value}`);
    });
    expect(seen).toEqual(["accept=application/json", "content-type=text/plain", "x-request-id=r1"]);
  });

  it("never answer names a record holds by inheritance, and refuse an invalid name as Headers does", () => {
    const headers = recordHeaders(record());
    expect(headers.get("constructor")).toBeNull();
    expect(headers.has("__proto__")).toBe(false);
    expect(headers.has("toString")).toBe(false);
    expect(() => headers.get("bad name")).toThrow(TypeError);
    expect(() => new Headers(record()).get("bad name")).toThrow(TypeError);
  });

  it("change like Headers, and are copied by Headers, Request and Object.fromEntries", () => {
    const source = record();
    const headers = recordHeaders(source);
    headers.set("X-Extra", "1");
    headers.append("accept", "text/html");
    headers.delete("content-type");
    expect(headers.get("x-extra")).toBe("1");
    expect(headers.get("accept")).toBe("application/json, text/html");
    expect(headers.has("content-type")).toBe(false);
    expect([...headers.keys()]).toEqual(["accept", "x-extra", "x-request-id"]);
    const changed: string[] = [];
    headers.forEach((value, key, parent) => {
      expect(parent).toBe(headers);
      changed.push(`${key}=${value}`);
    });
    expect(changed).toEqual(["accept=application/json, text/html", "x-extra=1", "x-request-id=r1"]);
    // The forwarded record itself is left as it was.
    expect(source).toEqual(record());
    expect(headers.getSetCookie()).toEqual([]);

    const untouched = recordHeaders(record());
    expect(Object.fromEntries(new Headers(untouched))).toEqual(record());
    const request = new Request("http://x.internal/", { headers: untouched });
    expect(request.headers.get("x-request-id")).toBe("r1");
  });
});
