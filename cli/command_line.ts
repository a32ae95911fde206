/**
 * The command line: the first argument names a verb (default `serve`), the rest are its flags.
 * Every failure is one line on stderr and exit status 1 (2 for an unknown verb).
 *
 * @module
 */
import { USAGE } from "./usage.ts";

/**
 * Runs one command line. Returns the exit status, or `undefined` when the process should stay
 * up (`serve`, `view`) or end by itself once its work is done (`inspect`). Every verb takes
 * `--help`.
 */
export async function runCommandLine(args: readonly string[]): Promise<number | undefined> {
  const [verb = "serve", ...rest] = args;
  try {
    switch (verb) {
      // Each verb is loaded when named: `serve` starts without the rollout machinery (sandboxes,
      // harnesses, the e2b SDK), which is most of its cold start.
      case "serve":
        await (await import("./serve.ts")).serve(rest);
        return undefined;
      case "inspect":
        return await (await import("./inspect.ts")).inspect(rest);
      case "audit":
        return await (await import("./audit.ts")).audit(rest);
      case "rollout":
        return await (await import("./rollout.ts")).rolloutCommand(rest);
      case "view":
        return await (await import("./view.ts")).view(rest);
      case "agent":
        return await (await import("./agent.ts")).agent(rest);
      case "help":
      case "--help":
        console.log(USAGE);
        return 0;
      default:
        console.error(`unknown verb ${verb}\n\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    console.error(`rollgate: ${(e as Error).message}`);
    return 1;
  }
}
