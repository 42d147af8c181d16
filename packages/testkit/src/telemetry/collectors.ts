// Stand-ins for the telemetry backends: an OTLP/HTTP collector (`/v1/traces`, `/v1/logs`,
// `/v1/metrics`, JSON or protobuf bodies, `x-api-key` checked when configured) and Langfuse's
// OTLP endpoint (`/api/public/otel/v1/traces` behind Basic auth, `/api/public/health`). Both keep
// every byte they receive, so a test can search all of it, and count every connection made.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ReceivedExport {
  path: string;
  contentType: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
  /** The parsed body for JSON exports (OTLP/JSON), else undefined. */
  json?: OtlpJson;
}

/** The parts of an OTLP/JSON export the tests read. */
export interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
  resourceLogs?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeLogs?: { logRecords?: OtlpLogRecord[] }[];
  }[];
}
export interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: OtlpAttribute[];
  startTimeUnixNano?: string;
  endTimeUnixNano?: string;
}
export interface OtlpLogRecord {
  eventName?: string;
  body?: { stringValue?: string };
  attributes?: OtlpAttribute[];
  traceId?: string;
  spanId?: string;
}

export interface CollectorStandIn {
  url: string;
  received: ReceivedExport[];
  /** TCP connections accepted, whatever they sent. */
  connections: number;
  /** Change how it answers: `hang` never answers; `status` answers that status. */
  behave(mode: { hang?: boolean; status?: number }): void;
  /** Every span of every JSON trace export, with the resource's attributes. */
  spans(): (OtlpSpan & { resource: Record<string, unknown> })[];
  /** Every log record of every JSON log export. */
  logRecords(): (OtlpLogRecord & { resource: Record<string, unknown> })[];
  /** All bytes received, headers included, as one string: for "never sent" checks. */
  everything(): string;
  close(): Promise<void>;
}

export function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (list ?? []).map((a) => [
      a.key,
      a.value.stringValue ??
        (a.value.intValue !== undefined ? Number(a.value.intValue) : undefined) ??
        a.value.boolValue ??
        a.value.doubleValue,
    ]),
  );
}

interface Options {
  /** Paths it serves (POST) and how a request is authorized; anything else is a 404. */
  routes: string[];
  authorized(req: IncomingMessage): boolean;
  extra?(req: IncomingMessage, res: ServerResponse): boolean;
}

async function startCollector(options: Options): Promise<CollectorStandIn> {
  const received: ReceivedExport[] = [];
  let mode: { hang?: boolean; status?: number } = {};
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    if (options.extra?.(req, res)) return;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const body = Buffer.concat(chunks);
      const contentType = String(req.headers["content-type"] ?? "");
      const record: ReceivedExport = { path, contentType, headers: req.headers, body };
      if (contentType.includes("json")) {
        try {
          record.json = JSON.parse(body.toString("utf8")) as OtlpJson;
        } catch {
          // Kept as bytes.
        }
      }
      received.push(record);
      if (mode.hang) return;
      if (req.method !== "POST" || !options.routes.includes(path)) {
        res.writeHead(404).end();
        return;
      }
      if (!options.authorized(req)) {
        res.writeHead(401, { "content-type": "application/json" }).end('{"message":"unauthorized"}');
        return;
      }
      const status = mode.status ?? 200;
      res.writeHead(status, {
        "content-type": contentType.includes("json") ? "application/json" : "application/x-protobuf",
      });
      res.end(contentType.includes("json") ? "{}" : undefined);
    });
  });
  server.on("connection", (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const jsonOf = (r: ReceivedExport) => r.json ?? {};
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    get connections() {
      return connections;
    },
    behave(next) {
      mode = next;
    },
    spans: () =>
      received.flatMap((r) =>
        (jsonOf(r).resourceSpans ?? []).flatMap((rs) =>
          (rs.scopeSpans ?? []).flatMap((ss) =>
            (ss.spans ?? []).map((s) => ({ ...s, resource: attributesOf(rs.resource?.attributes) })),
          ),
        ),
      ),
    logRecords: () =>
      received.flatMap((r) =>
        (jsonOf(r).resourceLogs ?? []).flatMap((rl) =>
          (rl.scopeLogs ?? []).flatMap((sl) =>
            (sl.logRecords ?? []).map((l) => ({ ...l, resource: attributesOf(rl.resource?.attributes) })),
          ),
        ),
      ),
    everything: () => received.map((r) => `${JSON.stringify(r.headers)}\n${r.body.toString("latin1")}`).join("\n"),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An OTLP/HTTP collector; with `apiKey`, requests without that `x-api-key` get a 401. */
export function startOtlpCollector(options: { apiKey?: string } = {}): Promise<CollectorStandIn> {
  return startCollector({
    routes: ["/v1/traces", "/v1/logs", "/v1/metrics"],
    authorized: (req) => !options.apiKey || req.headers["x-api-key"] === options.apiKey,
  });
}

/** Langfuse's ingestion: OTLP traces under `/api/public/otel`, Basic auth `public:secret`. */
export function startLangfuse(keys: { publicKey: string; secretKey: string }): Promise<CollectorStandIn> {
  const expected = `Basic ${Buffer.from(`${keys.publicKey}:${keys.secretKey}`).toString("base64")}`;
  return startCollector({
    routes: ["/api/public/otel/v1/traces"],
    authorized: (req) => req.headers.authorization === expected,
    extra(req, res) {
      if (req.method === "GET" && req.url?.startsWith("/api/public/health")) {
        res.writeHead(200, { "content-type": "application/json" }).end('{"status":"OK","version":"3"}');
        return true;
      }
      return false;
    },
  });
}
