import Foundation
import XCTest

/// httpie run in batches: one Python process (httpie's own interpreter) calls `httpie.core.main` for many commands in
/// turn, each with its own standard streams, folder and environment, so the ~0.4 s a process costs is paid once per
/// batch, not once per command.
struct HTTPieDriver {
    /// One case's commands, for the driver.
    struct Job {
        let name: String
        let directory: URL
        let home: URL
        let terminal: Bool
        let environment: [String: String]
        let steps: [(arguments: [String], stdin: Data?)]

        var json: [String: Any] {
            [
                "name": name, "directory": directory.path, "home": home.path, "terminal": terminal,
                "environment": environment,
                "steps": steps.map { step -> [String: Any] in
                    ["arguments": step.arguments, "stdin": step.stdin.map { $0.base64EncodedString() } ?? NSNull()]
                },
            ]
        }
    }

    /// What a batch did: httpie's version, its default `User-Agent` and `Accept-Encoding`, and each job's steps.
    struct Results {
        let version: String
        let defaults: OracleDefaults
        let steps: [String: [(status: Int32, output: Data, errors: String)]]
        /// How long each job took.
        let seconds: [String: Double]
    }

    /// httpie's Python interpreter (from the `http` script's first line).
    let python: URL
    /// Where the driver's script, jobs and results are written.
    let directory: URL

    /// The driver for `BLUEBONNET_HTTPIE`, or a skip (a failure with `BLUEBONNET_REQUIRE_HTTPIE=1`) without it.
    static func located(in directory: URL) throws -> HTTPieDriver {
        let environment = ProcessInfo.processInfo.environment
        let path = environment["BLUEBONNET_HTTPIE"] ?? ""
        guard FileManager.default.isExecutableFile(atPath: path) else {
            if environment["BLUEBONNET_REQUIRE_HTTPIE"] != nil {
                XCTFail("BLUEBONNET_HTTPIE does not name httpie's `http` (BLUEBONNET_REQUIRE_HTTPIE=1)")
            }
            throw XCTSkip("httpie is not installed (BLUEBONNET_HTTPIE)")
        }
        let script = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data(), as: UTF8.self)
        let shebang = script.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? ""
        var python = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("python3")
        if shebang.hasPrefix("#!") {
            let interpreter = shebang.dropFirst(2).trimmingCharacters(in: .whitespaces)
            if !interpreter.contains(" "), FileManager.default.isExecutableFile(atPath: interpreter) {
                python = URL(fileURLWithPath: interpreter)
            }
        }
        let driver = HTTPieDriver(python: python, directory: directory)
        try Data(Self.source.utf8).write(to: directory.appendingPathComponent("httpie_oracle_driver.py"))
        return driver
    }

    /// Runs `jobs` in one process, each job's steps in order, and returns what each step did.
    func run(_ jobs: [Job], batch: String) async throws -> Results {
        let jobsFile = directory.appendingPathComponent("jobs-\(batch).json")
        let resultsFile = directory.appendingPathComponent("results-\(batch).json")
        let errorsFile = directory.appendingPathComponent("driver-\(batch).log")
        try JSONSerialization.data(withJSONObject: jobs.map(\.json)).write(to: jobsFile)
        _ = FileManager.default.createFile(atPath: errorsFile.path, contents: nil)
        let process = Process()
        process.executableURL = python
        process.arguments = [
            directory.appendingPathComponent("httpie_oracle_driver.py").path, jobsFile.path, resultsFile.path,
        ]
        process.currentDirectoryURL = directory
        // Nothing of this machine's leaks in: no proxy variables, no httpie configuration, no update check.
        process.environment = [
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": directory.path, "LANG": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1",
            "HTTPIE_CONFIG_DIR": directory.appendingPathComponent("httpie-config").path,
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: errorsFile)
        process.standardError = try FileHandle(forWritingTo: errorsFile)
        let status = try await Self.waitFor(process, hangGuard: 900)
        let log = String(decoding: (try? Data(contentsOf: errorsFile)) ?? Data(), as: UTF8.self)
        guard status == 0,
            let results = try? JSONSerialization.jsonObject(with: Data(contentsOf: resultsFile)) as? [String: Any]
        else {
            throw DriverFailure(description: "the httpie driver exited \(status): \(log.suffix(4000))")
        }
        let defaults = results["defaults"] as? [String: String] ?? [:]
        var steps: [String: [(status: Int32, output: Data, errors: String)]] = [:]
        var seconds: [String: Double] = [:]
        for job in results["results"] as? [[String: Any]] ?? [] {
            guard let name = job["name"] as? String else { continue }
            seconds[name] = job["seconds"] as? Double ?? 0
            steps[name] = (job["steps"] as? [[String: Any]] ?? []).map { step in
                (
                    Int32(step["status"] as? Int ?? -1),
                    Data(base64Encoded: step["output"] as? String ?? "") ?? Data(),
                    step["errors"] as? String ?? ""
                )
            }
        }
        return Results(
            version: results["version"] as? String ?? "?",
            defaults: OracleDefaults(userAgent: defaults["User-Agent"], acceptEncoding: defaults["Accept-Encoding"]),
            steps: steps, seconds: seconds)
    }

    struct DriverFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// Waits for `process` to exit (its termination handler, not a poll), terminating it after `hangGuard` seconds.
    static func waitFor(_ process: Process, hangGuard: Double) async throws -> Int32 {
        let guardTask = Task {
            try await Task.sleep(for: .seconds(hangGuard))
            if process.isRunning { process.terminate() }
        }
        defer { guardTask.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { process in continuation.resume(returning: process.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
    }

    /// The driver: for each job, each step runs `httpie.core.main` with standard streams in memory (standard input a
    /// real pipe when the step has one, a terminal when not), in the job's folder, with the job's `$HOME` and its own
    /// httpie configuration (update checks off).
    static let source = #"""
        import base64
        import io
        import json
        import os
        import sys
        import threading
        import time
        from pathlib import Path


        class NamedBytes(io.BytesIO):
            """Bytes in memory with the name a real standard stream has (httpie's downloads print it)."""

            def __init__(self, name):
                super().__init__()
                self.name = name


        def feed(descriptor, data):
            with os.fdopen(descriptor, 'wb') as pipe:
                pipe.write(data)


        def run_step(httpie_main, Environment, job, step):
            home = Path(job['home'])
            config = home / '.config' / 'httpie'
            config.mkdir(parents=True, exist_ok=True)
            # A case's own config.json (default_options) is kept, with update warnings off; one that is not JSON
            # is left as it is, for httpie to say so.
            settings = {}
            if (config / 'config.json').exists():
                try:
                    settings = json.loads((config / 'config.json').read_text())
                except ValueError:
                    settings = None
            if isinstance(settings, dict):
                settings['disable_update_warnings'] = True
                (config / 'config.json').write_text(json.dumps(settings))
            os.chdir(job['directory'])
            saved = dict(os.environ)
            os.environ['HOME'] = str(home)
            os.environ.update(job.get('environment') or {})
            out, err = NamedBytes('<stdout>'), NamedBytes('<stderr>')
            stdout = io.TextIOWrapper(out, encoding='utf-8', write_through=True)
            stderr = io.TextIOWrapper(err, encoding='utf-8', write_through=True)
            stdin = None
            if step.get('stdin') is not None:
                read_end, write_end = os.pipe()
                data = base64.b64decode(step['stdin'])
                threading.Thread(target=feed, args=(write_end, data), daemon=True).start()
                stdin = os.fdopen(read_end, 'rb')
            env = Environment(
                stdin=stdin, stdin_isatty=stdin is None, stdout=stdout, stdout_isatty=bool(job.get('terminal')),
                stderr=stderr, stderr_isatty=False, config_dir=config)
            try:
                status = int(httpie_main(['http'] + step['arguments'], env))
            except SystemExit as exit:
                status = exit.code if isinstance(exit.code, int) else 1
            except BaseException as error:
                stderr.write('driver: %r\n' % (error,))
                status = -1
            finally:
                if stdin is not None:
                    stdin.close()
                os.environ.clear()
                os.environ.update(saved)
            stdout.flush()
            stderr.flush()
            return {'status': status, 'output': base64.b64encode(out.getvalue()).decode('ascii'),
                    'errors': err.getvalue().decode('utf-8', 'replace')}


        def main():
            jobs_path, results_path = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
            with open(jobs_path, encoding='utf-8') as jobs_file:
                jobs = json.load(jobs_file)
            import httpie
            import requests.utils
            from httpie.context import Environment
            from httpie.core import main as httpie_main
            from httpie.plugins.registry import plugin_manager
            from httpie.ssl_ import HTTPieHTTPSAdapter

            # Speed only: each command would load the system's CA certificates again (60 ms) and scan the installed
            # plugins again; both are the same for every command of a batch.
            contexts = {}
            make_context = HTTPieHTTPSAdapter._create_ssl_context

            def cached_context(verify, ssl_version=None, ciphers=None):
                key = (verify, ssl_version, ciphers)
                if key not in contexts:
                    contexts[key] = make_context(verify=verify, ssl_version=ssl_version, ciphers=ciphers)
                return contexts[key]

            HTTPieHTTPSAdapter._create_ssl_context = staticmethod(cached_context)
            plugin_manager.load_installed_plugins(None)
            plugin_manager.load_installed_plugins = lambda directory=None: None

            results = []
            for job in jobs:
                started = time.monotonic()
                steps = [run_step(httpie_main, Environment, job, step) for step in job['steps']]
                results.append({'name': job['name'], 'steps': steps, 'seconds': time.monotonic() - started})
            defaults = {'User-Agent': 'HTTPie/' + httpie.__version__,
                        'Accept-Encoding': requests.utils.DEFAULT_ACCEPT_ENCODING}
            with open(results_path, 'w', encoding='utf-8') as results_file:
                json.dump({'version': httpie.__version__, 'defaults': defaults, 'results': results}, results_file)


        main()
        """#
}
