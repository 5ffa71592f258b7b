/** The benchmarks' command-line options: `--name value` pairs, checked where they are read. */

/** The text after `name`, or undefined when the option is absent. */
export function textArg(name: string, argv: readonly string[] = process.argv): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** The whole number after `name` (at least `min`), or `fallback`; anything else throws naming the option. */
export function wholeArg(
  name: string,
  fallback: number,
  min = 1,
  argv: readonly string[] = process.argv,
): number {
  const text = textArg(name, argv);
  const value = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} needs a whole number >= ${min}`);
  return value;
}
