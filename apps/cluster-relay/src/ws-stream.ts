import type { Duplex } from "node:stream";
import { createWebSocketStream, type WebSocket } from "ws";

/**
 * The tunnel's WebSocket as the byte stream HTTP/2 runs over. HTTP/2 writes the frames of one
 * flush together (a corked batch); they leave as one WebSocket message, one socket write, instead
 * of a message per frame. Message boundaries mean nothing to the reader (connections-svc writes the same way).
 */
export function tunnelStream(ws: WebSocket): Duplex {
  const duplex = createWebSocketStream(ws);
  duplex._writev = (chunks: { chunk: Buffer }[], callback: (err?: Error | null) => void) => {
    ws.send(chunks.length === 1 ? chunks[0]!.chunk : Buffer.concat(chunks.map((c) => c.chunk)), callback);
  };
  return duplex;
}
