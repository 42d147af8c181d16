import { call, setCsrfToken } from "./client.ts";
import type { OpenedSession } from "./types.ts";

/** Sign-in: the pasted API token is exchanged for a session once and never kept by the page. */
export async function signIn(token: string): Promise<OpenedSession> {
  const opened = await call("createSession", {}, { token: token.trim() });
  setCsrfToken(opened.csrfToken);
  return opened;
}

/** The current session (after a reload or in a new tab): its CSRF token is read again. */
export async function restoreSession(): Promise<OpenedSession> {
  const opened = await call("getCurrentSession");
  setCsrfToken(opened.csrfToken);
  return opened;
}

export async function signOut(): Promise<void> {
  try {
    await call("deleteCurrentSession");
  } finally {
    setCsrfToken(undefined);
  }
}
