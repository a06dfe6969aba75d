"use strict";
// Installs the rest of the stack in the sandbox worker, one package per call, with
// Pyodide's own installer (the unpacking and native-module loading that loadPackage
// does) but not its last step: loadPackage clears every import cache in the
// interpreter after each package, about 80 ms each here with pandas and matplotlib
// imported. New files appear under one directory only, so only its finder and the
// metadata lookup are refreshed. Anything unexpected throws, and the caller falls
// back to loadPackage. Loaded into the worker with importScripts(); it leaves one
// object on `self`.
(() => {
const REFRESH = `
def _reckon_refresh(directory):
    import importlib.metadata, sys
    finder = sys.path_importer_cache.get(directory)
    if finder is not None:
        finder.invalidate_caches()
    importlib.metadata.MetadataPathFinder.invalidate_caches()
_reckon_refresh
`;

class InstallError extends Error {}

/**
 * Install `name` and what it depends on from `files` ({file_name: Blob}) as
 * pyodide.loadPackage would (same files, INSTALLER and PYODIDE_SOURCE, native modules
 * loaded by Pyodide's loader, the package marked loaded); loaded packages are skipped.
 * @param {any} pyodide @param {{packages: Record<string, {name: string, file_name: string, install_dir: string, depends: string[]}>}} lock
 * @param {Record<string, Blob>} files @param {string} name
 * @returns {Promise<void>}
 */
async function installPackage(pyodide, lock, files, name) {
  const pkg = lock.packages[name];
  if (!pkg) throw new InstallError(`no package ${name} in the lock file`);
  if (pyodide.loadedPackages[pkg.name]) return;
  for (const dep of pkg.depends) await installPackage(pyodide, lock, files, dep);
  const blob = files[pkg.file_name];
  if (!(blob instanceof Blob)) throw new InstallError(`${pkg.file_name} is not here`);
  const api = pyodide._api;
  const dir = api.package_loader.get_install_dir(pkg.install_dir);
  const dynlibs = api.package_loader.unpack_buffer.callKwargs({
    buffer: new Uint8Array(await blob.arrayBuffer()),
    filename: pkg.file_name,
    extract_dir: dir,
    installer: "pyodide.loadPackage",
    source: "pyodide", // what loadPackage records for its own channel
    calculate_dynlibs: true,
  });
  await api.loadDynlibsFromPackage({ file_name: pkg.file_name }, dynlibs); // a JS array
  pyodide._module.reportUndefinedSymbols();
  pyodide.loadedPackages[pkg.name] = "default channel"; // loadPackage's name for it
  if (!refresh) refresh = pyodide.runPython(REFRESH, { globals: pyodide.toPy({}) });
  /** @type {(directory: string) => void} */ (refresh)(dir);
}
/** @type {((directory: string) => void) | null} */
let refresh = null; // _reckon_refresh, made once

self.__reckonInstall = { installPackage, InstallError };
})();
