/** What the command line was given: words in order, and `--name value` (or a bare `--name`) flags. */
export interface Parsed {
  positional: string[]
  flags: Flags
}

export type Flags = Record<string, string | true>

/** A refusal of the command line itself: printed as `svcpay: <message>` with exit code 1. */
export class CliError extends Error {}

export function parseArgs(argv: string[]): Parsed {
  const positional: string[] = []
  const flags: Flags = {}
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a.startsWith('--')) {
      const name = a.slice(2)
      const next = argv[i + 1]
      if (next !== undefined && !next.startsWith('--') && !['json', 'help'].includes(name)) {
        flags[name] = next
        i++
      } else flags[name] = true
    } else positional.push(a)
  }
  return { positional, flags }
}

/** A flag that must be given with a value. */
export function need(flags: Flags, name: string): string {
  const v = flags[name]
  if (typeof v !== 'string' || !v) throw new CliError(`--${name} is required`)
  return v
}

/** What a command is run with: its verb, the words after it, the flags, and where it prints. */
export interface CommandContext {
  verb: string | undefined
  rest: string[]
  flags: Flags
  out: (s: string) => void
  /** Prints the value as JSON under `--json`, else the human text. */
  print: (value: unknown, human: string) => void
}

export type Command = (c: CommandContext) => Promise<void>

/** A command group's commands, by `group verb` as typed (`reconcile` alone for a bare group). */
export type Commands = Record<string, Command>
