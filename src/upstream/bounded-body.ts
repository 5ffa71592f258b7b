/**
 * Reading a response body with a ceiling, counted after decompression: a 1 MB gzip body can inflate to
 * gigabytes, and a 200 MB body once aborted the worker on its heap limit. The body is read as a stream
 * and the request destroyed the moment the ceiling is passed, so at most `maxBytes` (plus one chunk) is
 * ever held, whatever the service sends or claims in Content-Length.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

/** UPSTREAM_MAX_BODY's default: a page of 10,000 large records fits with room to spare. */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface BoundedResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body passed the ceiling: `body` is empty and the connection was dropped. */
  tooLarge: boolean;
}

/** The ceiling's one-line explanation, for the protocol error. */
export function tooLargeDetail(maxBytes: number): string {
  return (
    `the response body is larger than ${maxBytes} bytes after decompression (UPSTREAM_MAX_BODY); ` +
    'reading stopped there. Lower PAGE_SIZE, or raise UPSTREAM_MAX_BODY if the pages really are that large'
  );
}

type ResponseStream = Readable & {
  on(
    event: 'response',
    listener: (response: { statusCode: number; headers: IncomingHttpHeaders }) => void,
  ): unknown;
};

/** Reads a got stream to its end, or stops it past `maxBytes`. Rejects with the stream's own error. */
export function readBounded(stream: ResponseStream, maxBytes: number): Promise<BoundedResponse> {
  return new Promise((resolve, reject) => {
    let statusCode = 0;
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    stream.on('response', (response) => {
      statusCode = response.statusCode;
      headers = response.headers;
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes && !response.headers['content-encoding']) stop();
    });
    const stop = () => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      stream.destroy();
      resolve({ statusCode, headers, body: '', tooLarge: true });
    };
    stream.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > maxBytes) return stop();
      chunks.push(chunk);
    });
    stream.on('end', () => {
      if (settled) return;
      settled = true;
      resolve({ statusCode, headers, body: Buffer.concat(chunks).toString('utf8'), tooLarge: false });
    });
    stream.on('error', (error) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
  });
}
