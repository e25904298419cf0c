import { UsageError } from '../args.js';
import { arg, noMoreArgs, type Command } from './command.js';
import { GROUPS, SERVER_COMMANDS } from './program.js';

const GLOBAL_FLAGS = ['--json', '--yes', '--help'];

interface Node {
  /** Words that may follow: subcommands of a group, flags of a command. */
  words: string[];
  /** A command (takes flags and arguments) rather than a group. */
  leaf: boolean;
  summary: string;
}

/** Every path of words (`''`, `tokens`, `tokens create`, `compute configs`) and what may follow it. */
function tree(commands: readonly Command[]): Map<string, Node> {
  const nodes = new Map<string, Node>([['', { words: [], leaf: false, summary: '' }]]);
  const add = (path: string, word: string, summary: string) => {
    const parent = nodes.get(path)!;
    if (!parent.words.includes(word)) parent.words.push(word);
    const key = path ? `${path} ${word}` : word;
    if (!nodes.has(key)) nodes.set(key, { words: [], leaf: false, summary });
    return key;
  };
  for (const [name, , summary] of SERVER_COMMANDS) nodes.get(add('', name, summary))!.leaf = true;
  for (const c of commands) {
    const words = c.name.split(' ');
    let path = '';
    words.forEach((w, i) => {
      path = add(path, w, i === words.length - 1 ? c.summary : (GROUPS[[...words.slice(0, i + 1)].join(' ')] ?? ''));
    });
    const leaf = nodes.get(path)!;
    leaf.leaf = true;
    leaf.words.push(...[...(c.flags ?? []), ...(c.lists ?? []), ...(c.booleans ?? [])].map((f) => `--${f}`), ...GLOBAL_FLAGS);
  }
  nodes.get('')!.words.push('--version', ...GLOBAL_FLAGS);
  return nodes;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * bash: the words typed so far, options left out, name a node; a command's node also matches
 * when arguments follow it. Longer paths are tried first so that `tokens create x` finds the
 * command, not the group.
 */
function bash(nodes: Map<string, Node>): string {
  const cases = [...nodes.entries()]
    .sort(([a], [b]) => b.split(' ').length - a.split(' ').length || a.localeCompare(b))
    .map(([path, n]) => `    ${n.leaf && path ? `${quote(path)}|${quote(`${path} `)}*` : quote(path)}) words=${quote(n.words.join(' '))} ;;`);
  return `# wsp completion for bash. Load it with:  source <(wsp completion bash)
# or save it where bash-completion looks:  wsp completion bash > ~/.local/share/bash-completion/completions/wsp
_wsp() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" words="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in -*) ;; *) path="\${path:+$path }$w" ;; esac
  done
  case "$path" in
${cases.join('\n')}
    *) words=${quote(GLOBAL_FLAGS.join(' '))} ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _wsp wsp
`;
}

/** zsh runs the bash function through its bash-completion layer, which zsh ships. */
const zsh = (nodes: Map<string, Node>) => `#compdef wsp
# wsp completion for zsh. Load it with:  source <(wsp completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bash(nodes)
  .split('\n')
  .filter((l) => !l.startsWith('#'))
  .join('\n')}`;

/** fish: a condition per path, from fish's own helpers. */
function fish(nodes: Map<string, Node>): string {
  const lines = ['# wsp completion for fish. Load it with:  wsp completion fish | source', 'complete -c wsp -f'];
  for (const [path, n] of nodes) {
    const words = path ? path.split(' ') : [];
    const condition =
      words.length === 0 ? '__fish_use_subcommand' : `__fish_seen_subcommand_from ${words[words.length - 1]}${words.length > 1 ? `; and __fish_seen_subcommand_from ${words[words.length - 2]}` : ''}`;
    for (const w of n.words) {
      if (w.startsWith('--')) lines.push(`complete -c wsp -n ${quote(condition)} -l ${w.slice(2)}`);
      else lines.push(`complete -c wsp -n ${quote(condition)} -a ${quote(w)} -d ${quote(nodes.get(path ? `${path} ${w}` : w)?.summary ?? '')}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export function completionCommand(commands: () => readonly Command[]): Command {
  return {
    name: 'completion',
    usage: 'bash|zsh|fish',
    summary: 'print a shell completion script (commands, subcommands and flags)',
    details: 'bash: source <(wsp completion bash)\nzsh:  source <(wsp completion zsh)\nfish: wsp completion fish | source',
    async run(ctx) {
      const shell = arg(ctx, 0, 'the shell (bash, zsh or fish)');
      noMoreArgs(ctx, 1);
      const nodes = tree(commands());
      const script = { bash, zsh, fish }[shell as 'bash' | 'zsh' | 'fish'];
      if (!script) throw new UsageError(`completion is for bash, zsh or fish, not "${shell}"`);
      ctx.io.out.write(script(nodes));
    },
  };
}
