/**
 * The bundled `mcpd` command imports the npm packages of every @mcpd package it holds, so the daemon
 * package must declare them itself: installed, another package's dependencies are not visible from the
 * daemon's files. Used by bundle-cli.mjs after bundling.
 */

/** The npm package a bare import names (`undici/x` -> `undici`, `@scope/pkg/x` -> `@scope/pkg`). */
export function packageOf(id) {
  const parts = id.split("/");
  return id.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? id);
}

/**
 * What is wrong with the daemon's declared dependencies for what the bundle imports.
 * @param imports `{file, id}` for every npm package import of the bundle's files (not Node's own modules).
 * @param declared the daemon package's `dependencies`.
 * @param wanted the `dependencies` of the other packages the bundle holds, merged (name -> version).
 * @returns one line per fault, each naming the import or the package and version; empty when all is well.
 */
export function dependencyFaults(imports, declared, wanted) {
  const faults = new Set();
  for (const { file, id } of imports) {
    const name = packageOf(id);
    if (declared[name] === undefined) faults.add(`${file} imports ${id}, which daemon/package.json does not list in dependencies`);
    else if (wanted[name] !== undefined && wanted[name] !== declared[name])
      faults.add(`daemon/package.json lists ${name} ${declared[name]}, but the package that uses it wants ${wanted[name]}`);
  }
  return [...faults];
}
