import Mustache from 'mustache';

/** [type, value, start, end, children?, closeIndex?]: mustache.js's token tree. */
type Token = [string, string, number, number, Token[]?, number?];

/** Sections nested deeper than this are refused at creation: rendering recurses once per level. */
export const MAX_SECTION_DEPTH = 64;
/**
 * Token visits per render: sections over long lists must not run for ever producing nothing.
 * A large real template (a thousand list items through a dozen tags) takes some 20,000; the
 * template bomb of docs/reliability.md reaches this one in about 0.1 s of a render thread.
 */
export const MAX_RENDER_STEPS = 1_000_000;

/** What one render may spend; the output cap is the workspace's quota (WSP_QUOTA_RENDER_OUTPUT_BYTES). */
export interface RenderBudget {
  maxSteps: number;
  maxOutputBytes: number;
}

export class TemplateSyntaxError extends Error {}
/** A render that cannot complete: the message names the variable (or limit) at fault. */
export class TemplateRenderError extends Error {}

// A writer of our own without a template cache: templates come from callers, and the shared
// writer would keep every one of them in memory for ever.
const parser = new Mustache.Writer();
(parser as { templateCache?: unknown }).templateCache = undefined;

function depthOf(tokens: Token[]): number {
  let max = 0;
  for (const t of tokens) if (t[4]) max = Math.max(max, 1 + depthOf(t[4]));
  return max;
}

function findPartial(tokens: Token[]): Token | undefined {
  for (const t of tokens) {
    if (t[0] === '>') return t;
    const inner = t[4] && findPartial(t[4]);
    if (inner) return inner;
  }
  return undefined;
}

/** Parses a template as Mustache does; anything Mustache would refuse is a TemplateSyntaxError. */
export function parseTemplate(source: string): Token[] {
  let tokens: Token[];
  try {
    tokens = parser.parse(source) as Token[];
  } catch (err) {
    throw new TemplateSyntaxError(`not a valid Mustache template: ${(err as Error).message}`);
  }
  const partial = findPartial(tokens);
  // A version's files are rendered one by one with nothing to include: a partial could only
  // ever render empty, which is the silent failure strict rendering exists to prevent.
  if (partial) throw new TemplateSyntaxError(`partials are not supported ({{>${partial[1]}}} at offset ${partial[2]})`);
  if (depthOf(tokens) > MAX_SECTION_DEPTH) throw new TemplateSyntaxError(`sections are nested deeper than ${MAX_SECTION_DEPTH} levels`);
  return tokens;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * Mustache's name resolution (spec "Interpolation", "Sections"): `.` is the current item; the
 * first part of a dotted name is looked up from the innermost context outwards, the rest
 * inside what it found. Only own properties count, so `constructor` or `__proto__` never
 * reach JavaScript's prototypes.
 */
function lookup(stack: unknown[], name: string): unknown {
  if (name === '.') return stack[stack.length - 1];
  const [first, ...rest] = name.split('.');
  let value: unknown;
  for (let i = stack.length - 1; i >= 0; i--) {
    const frame = stack[i];
    if (isRecord(frame) && Object.hasOwn(frame, first!)) {
      value = frame[first!];
      break;
    }
  }
  for (const part of rest) {
    if (!isRecord(value) || !Object.hasOwn(value, part)) return undefined;
    value = value[part];
  }
  return value;
}

export const outputTooLarge = (limit: number) => `the rendered files are larger than the workspace's quota of ${limit} bytes per render`;

class Renderer {
  private chars = 0;
  private steps = 0;
  /** The tags of the file being rendered that had no value: all of them are named, not the first. */
  readonly missing = new Set<string>();

  constructor(private readonly budget: RenderBudget) {}

  // Characters count while rendering (each is at least one byte of UTF-8, so too many of them is
  // already too many bytes); the exact byte count is checked once per file, in renderFiles.
  private spend(steps: number, chars: number): void {
    this.steps += steps;
    this.chars += chars;
    if (this.steps > this.budget.maxSteps) throw new TemplateRenderError(`the render takes more than ${this.budget.maxSteps} steps (sections over long lists)`);
    if (this.chars > this.budget.maxOutputBytes) throw new TemplateRenderError(outputTooLarge(this.budget.maxOutputBytes));
  }

  private variable(token: Token, stack: unknown[]): string {
    const value = lookup(stack, token[1]);
    const tag = token[0] === 'name' ? `{{${token[1]}}}` : `{{{${token[1]}}}}`;
    if (value === undefined || value === null) {
      this.missing.add(tag);
      return '';
    }
    if (typeof value === 'object') {
      throw new TemplateRenderError(`${tag} is ${Array.isArray(value) ? 'a list' : 'an object'}; a variable needs a string, number or boolean`);
    }
    const text = String(value);
    return token[0] === 'name' ? Mustache.escape(text) : text;
  }

  render(tokens: Token[], stack: unknown[]): string {
    let out = '';
    for (const token of tokens) {
      this.spend(1, 0);
      let piece = '';
      switch (token[0]) {
        case 'text':
          piece = token[1];
          break;
        case 'name':
        case '&':
          piece = this.variable(token, stack);
          break;
        case '#': {
          // Mustache sections: a falsy or missing value renders nothing; a list repeats the
          // section per item; any other value renders it once with that value in context.
          const value = lookup(stack, token[1]);
          if (!value) break;
          if (Array.isArray(value)) {
            for (const item of value) {
              // Each pass counts, even over an empty section, or nested lists run unbounded.
              this.spend(1, 0);
              piece += this.render(token[4] ?? [], [...stack, item]);
            }
          } else {
            piece = this.render(token[4] ?? [], value === true ? stack : [...stack, value]);
          }
          break;
        }
        case '^': {
          const value = lookup(stack, token[1]);
          if (!value || (Array.isArray(value) && value.length === 0)) piece = this.render(token[4] ?? [], stack);
          break;
        }
        default:
          // Comments and delimiter changes render nothing.
          break;
      }
      if (token[0] !== '#' && token[0] !== '^') this.spend(0, piece.length);
      out += piece;
    }
    return out;
  }
}

export interface RenderedFile {
  path: string;
  content: Buffer;
}

/**
 * Renders every file with the same values. Missing values are named all at once, file by file
 * (`a.txt: no value for {{x}}, {{y}}; b.txt: no value for {{z}}`), so one round of fixing the
 * values is enough; any other failure stops at once and names its file. Runs on a render thread
 * (src/installs/renders/render-pool.ts), never on the server's event loop.
 */
export function renderFiles(files: Record<string, string>, values: Record<string, unknown>, budget: RenderBudget): RenderedFile[] {
  const renderer = new Renderer(budget);
  const missing: string[] = [];
  let bytes = 0;
  const rendered = Object.entries(files).map(([path, source]) => {
    try {
      const content = Buffer.from(renderer.render(parseTemplate(source), [values]), 'utf8');
      if (renderer.missing.size > 0) {
        missing.push(`${path}: no value for ${[...renderer.missing].join(', ')}`);
        renderer.missing.clear();
      }
      bytes += content.length;
      if (bytes > budget.maxOutputBytes) throw new TemplateRenderError(outputTooLarge(budget.maxOutputBytes));
      return { path, content };
    } catch (err) {
      if (err instanceof TemplateRenderError || err instanceof TemplateSyntaxError) throw new TemplateRenderError(`${path}: ${err.message}`);
      throw err;
    }
  });
  if (missing.length > 0) throw new TemplateRenderError(missing.join('; '));
  return rendered;
}
