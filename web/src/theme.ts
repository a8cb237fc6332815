// Light, dark or the system's choice (prefers-color-scheme): a toggle button, remembered in localStorage.

const THEME_KEY = "pragma-monitor.theme";
const THEMES = ["auto", "light", "dark"] as const;
type Theme = (typeof THEMES)[number];

const isTheme = (value: string | null): value is Theme => THEMES.some((theme) => theme === value);

function storedTheme(): Theme {
  try {
    const value = window.localStorage.getItem(THEME_KEY);
    return isTheme(value) ? value : "auto";
  } catch {
    return "auto";
  }
}

/** Apply a theme: `auto` leaves it to the stylesheet's prefers-color-scheme query. */
function apply(button: HTMLButtonElement, theme: Theme): void {
  if (theme === "auto") delete document.documentElement.dataset["theme"];
  else document.documentElement.dataset["theme"] = theme;
  button.textContent = `Theme: ${theme}`;
  button.setAttribute("aria-label", `Theme: ${theme} (change)`);
}

/** Wire the toggle: each press moves auto → light → dark → auto. */
export function setupTheme(button: HTMLButtonElement): void {
  let theme = storedTheme();
  apply(button, theme);
  button.addEventListener("click", () => {
    theme = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length] ?? "auto";
    apply(button, theme);
    try {
      window.localStorage.setItem(THEME_KEY, theme);
    } catch {
      // not remembered across loads
    }
  });
}
