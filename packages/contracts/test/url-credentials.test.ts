import { describe, expect, it } from "vitest";
import {
  carriesCredentialMarker,
  isCredentialParamName,
  redactCredentialsInText,
  redactUrlCredentials,
  URL_CREDENTIAL_MARKER,
  urlCredentialValues,
} from "../src/common/url-credentials.ts";

const R = URL_CREDENTIAL_MARKER;

describe("redactUrlCredentials", () => {
  it("hides credential query values, keeping every other parameter as written", () => {
    expect(redactUrlCredentials("https://mcp.example.com/sse?api_key=SECRET1&region=eu%20west&q=a+b")).toBe(
      `https://mcp.example.com/sse?api_key=${R}&region=eu%20west&q=a+b`,
    );
  });

  it("matches names case-insensitively and with - and _ variants", () => {
    for (const name of [
      "token",
      "TOKEN",
      "access_token",
      "access-token",
      "accessToken",
      "key",
      "apiKey",
      "API-KEY",
      "apikey",
      "sig",
      "signature",
      "X-Amz-Signature",
      "X-Amz-Security-Token",
      "X-Amz-Credential",
      "code",
      "client_secret",
      "password",
      "auth",
      "x-auth",
      "subscription-key",
    ]) {
      expect(isCredentialParamName(name), name).toBe(true);
      expect(redactUrlCredentials(`https://h.example/p?${name}=s3cr3t&page=2`), name).toBe(
        `https://h.example/p?${name}=${R}&page=2`,
      );
    }
    for (const name of ["page", "limit", "region", "author", "codec", "q", "format"]) {
      expect(isCredentialParamName(name), name).toBe(false);
    }
  });

  it("decodes percent-encoded names before judging them", () => {
    expect(redactUrlCredentials("https://h.example/?api%5Fkey=abc123&%74oken=xyz789")).toBe(
      `https://h.example/?api%5Fkey=${R}&%74oken=${R}`,
    );
  });

  it("hides every value of a repeated parameter", () => {
    expect(redactUrlCredentials("https://h.example/?token=one&x=1&token=two&Token=three")).toBe(
      `https://h.example/?token=${R}&x=1&token=${R}&Token=${R}`,
    );
  });

  it("hides the user-info password, and a user name that stands alone (a token)", () => {
    expect(redactUrlCredentials("https://user:pa%3Ass@host.example/mcp")).toBe(`https://user:${R}@host.example/mcp`);
    expect(redactUrlCredentials("https://ghp_abcdef@host.example/mcp")).toBe(`https://${R}@host.example/mcp`);
    expect(redactUrlCredentials("https://:only-pass@host.example/")).toBe(`https://:${R}@host.example/`);
  });

  it("hides credentials in a fragment written as parameters and keeps other fragments", () => {
    expect(redactUrlCredentials("https://h.example/cb#access_token=abc&state=xyz")).toBe(
      `https://h.example/cb#access_token=${R}&state=xyz`,
    );
    expect(redactUrlCredentials("https://h.example/doc?token=t0k3n#section-2")).toBe(
      `https://h.example/doc?token=${R}#section-2`,
    );
  });

  it("returns URLs with nothing to hide unchanged, byte for byte", () => {
    for (const url of [
      "https://h.example/v2",
      "HTTPS://H.example:443/a/../b?x=1",
      "https://h.example/?token",
      "https://h.example/?token=",
      "https://h.example/#fragment",
    ]) {
      expect(redactUrlCredentials(url)).toBe(url);
    }
  });

  it("handles IPv6 hosts and ports", () => {
    expect(redactUrlCredentials("http://admin:hunter2@[2001:db8::1]:8443/mcp?key=k&x=1")).toBe(
      `http://admin:${R}@[2001:db8::1]:8443/mcp?key=${R}&x=1`,
    );
  });

  it("returns strings that are not absolute URLs unchanged", () => {
    for (const text of ["", "not a url", "/relative?token=abc", "mailto:a@b.example?password=x", "https://"]) {
      expect(redactUrlCredentials(text)).toBe(text);
    }
  });

  it("gives a URL that still parses, so a redacted URL reads as one", () => {
    const redacted = redactUrlCredentials("https://u:p@h.example/?X-Amz-Signature=ab%2Fcd&X-Amz-Date=20260101");
    expect(new URL(redacted).searchParams.get("X-Amz-Signature")).toBe(R);
    expect(new URL(redacted).searchParams.get("X-Amz-Date")).toBe("20260101");
  });
});

describe("carriesCredentialMarker", () => {
  it("tells a redacted URL from a real one", () => {
    const real = "https://u:p@h.example/?token=abc&page=2";
    expect(carriesCredentialMarker(real)).toBe(false);
    expect(carriesCredentialMarker(redactUrlCredentials(real))).toBe(true);
    expect(carriesCredentialMarker(`https://h.example/?page=${R}`)).toBe(false);
    expect(carriesCredentialMarker(`https://h.example/#token=${R}`)).toBe(true);
    expect(carriesCredentialMarker("nope")).toBe(false);
  });
});

describe("redactCredentialsInText", () => {
  it("hides URLs' credentials inside a message, leaving trailing punctuation", () => {
    expect(redactCredentialsInText("could not fetch https://h.example/x?token=abc123). Retry.")).toBe(
      `could not fetch https://h.example/x?token=${R}). Retry.`,
    );
  });

  it("hides credential parameters in paths without a host", () => {
    expect(redactCredentialsInText('Unexpected token "Cannot POST /sse?api_key=SECRET42&x=1"')).toBe(
      `Unexpected token "Cannot POST /sse?api_key=${R}&x=1"`,
    );
  });

  it("hides known values wherever they appear, raw or decoded", () => {
    const known = urlCredentialValues("https://h.example/?key=a%2Bb%2Fc-long");
    expect(known).toEqual(expect.arrayContaining(["a%2Bb%2Fc-long", "a+b/c-long"]));
    expect(redactCredentialsInText("the server said a+b/c-long is wrong", known)).toBe(`the server said ${R} is wrong`);
    // Too short to replace by value without garbling the message.
    expect(redactCredentialsInText("answered 401", ["401"])).toBe("answered 401");
  });
});
