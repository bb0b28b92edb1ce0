/**
 * HTML escaped by construction. `html` is a tagged template: its literal
 * parts are the markup, and every interpolated string or number is escaped
 * for text and quoted attribute values; only another `Html` goes in as it is.
 * The few places that must not be entity-escaped — a stylesheet, a script,
 * JSON data for a script — have their own builders, each escaping what ends
 * its element. Nothing else turns a string into `Html`. Pure.
 */

/**
 * Markup built by the functions here; its text is safe to put into a page. The class is not
 * exported (only its type is), and its private field makes the type nominal: no other code can
 * make one.
 */
class SafeHtml {
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  toString(): string {
    return this.#text;
  }
}
export type Html = SafeHtml;

const trusted = (text: string): Html => new SafeHtml(text);

export type HtmlValue = Html | string | number | readonly HtmlValue[];

export function escapeHtml(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.toString();
  if (typeof value === 'number') return escapeHtml(String(value));
  if (typeof value === 'string') return escapeHtml(value);
  return value.map(render).join('');
}

/** Markup with every interpolation escaped (arrays are joined, each item escaped unless it is Html). */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? '');
  });
  return trusted(out);
}

/** Items joined by a separator, each escaped unless it is Html. */
export function joinHtml(items: readonly HtmlValue[], separator: string): Html {
  return trusted(items.map(render).join(escapeHtml(separator)));
}

/** A <style> element: CSS is not entity-decoded, so only `</style` could end it early — refused. */
export function styleElement(css: string): Html {
  if (/<\/style/i.test(css)) throw new Error('a stylesheet must not contain </style');
  return trusted(`<style>${css}</style>`);
}

/** JSON that is safe inside <script>: no `</script>` or `<!--` can end or change the element. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replaceAll('<', '\\u003c').replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029');
}

/** A data block a script reads with JSON.parse(element.textContent). */
export function jsonScript(id: string, value: unknown): Html {
  return html`<script type="application/json" id="${id}">${trusted(scriptJson(value))}</script>`;
}

/**
 * Code inlined in <script>: `</script` would end the element early; `<\/script` means the same to
 * JavaScript (in strings, regular expressions and comments alike, where it can appear).
 */
export function scriptElement(code: string, options: { module?: boolean; comment?: string } = {}): Html {
  const comment = options.comment === undefined ? '' : `/* ${options.comment.replaceAll('*/', '* /')} */\n`;
  const body = `${comment}${code}`.replaceAll(/<\/script/gi, '<\\/script');
  return trusted(`<script${options.module === true ? ' type="module"' : ''}>${body}</script>`);
}
