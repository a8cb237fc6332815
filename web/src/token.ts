// The daemon's token (server.token) in the page: from the URL fragment or the prompt, kept in sessionStorage.

const STORAGE_KEY = "pragma-monitor.token";

/** The token in a URL fragment (`#token=...`), or null (pure). */
export function tokenFromFragment(hash: string): string | null {
  const params = new URLSearchParams(hash.startsWith("#") ? hash.slice(1) : hash);
  const token = params.get("token");
  return token === null || token.trim() === "" ? null : token.trim();
}

/** The WebSocket URL of the page's own host, with the token as `?token=` (browsers cannot set headers on it). */
export function webSocketUrl(location: Pick<Location, "protocol" | "host">, token: string | null): string {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const query = token === null ? "" : `?token=${encodeURIComponent(token)}`;
  return `${scheme}//${location.host}/ws${query}`;
}

/**
 * The token to use: one in the fragment wins and is moved to sessionStorage (the fragment is then dropped from
 * the address bar, so it is not bookmarked or shared by accident); else the one stored in this tab.
 */
export function loadToken(): string | null {
  const fromFragment = tokenFromFragment(window.location.hash);
  if (fromFragment !== null) {
    saveToken(fromFragment);
    const { pathname, search } = window.location;
    window.history.replaceState(null, "", `${pathname}${search}`);
    return fromFragment;
  }
  try {
    return window.sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/** Keep the token for this tab (sessionStorage: gone when the tab closes). */
export function saveToken(token: string): void {
  try {
    window.sessionStorage.setItem(STORAGE_KEY, token);
  } catch {
    // storage refused (private mode quotas): the token still works until the page is reloaded
  }
}
