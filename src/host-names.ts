/**
 * Host names as paysync judges them: which name only reaches this machine (loopback), which is an IP
 * literal, and the host name a `Host` header carries. Pure; used by the settings (is an `http://` base URL
 * on this machine?) and by the request gate of every listening port (may this `Host` be answered?).
 */
import { isIP } from 'node:net';

/** Lower-case, without IPv6 brackets or a trailing dot (`[::1]` → `::1`, `Example.ORG.` → `example.org`). */
export function normaliseHostName(name: string): string {
  return name
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/** Whether `name` (a host name or IP literal, brackets allowed) can only mean this machine. */
export function isLoopbackHost(name: string): boolean {
  const host = normaliseHostName(name);
  if (host === 'localhost' || host === '::1') return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return true;
  // an IPv4 loopback mapped into IPv6, as written or as the URL parser normalises it (::ffff:7f00:1)
  return /^::ffff:(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|7f[0-9a-f]{2}:[0-9a-f]{1,4})$/.test(host);
}

/** Whether `name` is an IPv4 or IPv6 literal (brackets allowed). */
export function isIpLiteral(name: string): boolean {
  return isIP(normaliseHostName(name)) !== 0;
}

/** A Host header as RFC 9110 allows it: a name or IPv4 literal, or a bracketed IPv6 literal, and a port. */
const HOST_HEADER = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The host name of a `Host` header (`[::1]:8080` → `::1`, `Example.org:80` → `example.org`), or null when
 * it is missing or not a host (`evil.example@127.0.0.1`, which a URL parser would read as 127.0.0.1).
 */
export function hostNameOf(header: string | undefined): string | null {
  if (!header || !HOST_HEADER.test(header)) return null;
  try {
    return normaliseHostName(new URL(`http://${header}`).hostname);
  } catch {
    return null;
  }
}
