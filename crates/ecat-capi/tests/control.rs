//! The `ecat` tool beside a running C application, over a real socket: `ecat sim` (the
//! simulator command, its own process, SCHED_FIFO on CPU 1 inside a network namespace) serves
//! the `io` network on one end of a veth pair; `tests/capi/control_veth.c`, built against
//! `libethercat.so.1`, runs IgH's 1 kHz loop on the other end (`ECAT_MASTER0=raw:<iface>`)
//! for 10,000 cycles after OP and counts every cycle with an incomplete domain working
//! counter; meanwhile this test runs `ecat slaves -m 0`, `ecat upload -m 0` and
//! `ecat data -m 0` against it in a loop and checks their answers. The program must report
//! zero incomplete cycles. Needs root, iproute2, chrt/taskset and the `ecat` binary of the
//! same build (`cargo build -p ecat-cli`; the workspace build makes it); skipped with a
//! sentence otherwise (under CI=true a missing binary fails).

mod common;

use ecat::netns::{self, VethNs};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The `ecat` binary next to this test's build.
fn ecat_binary() -> Option<PathBuf> {
    let p = common::target_dir().join("ecat");
    p.exists().then_some(p)
}

/// Ends the child (by its pid) on drop.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        // SAFETY: kill on the pid of a child we started and have not waited for.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tool(ecat: &PathBuf, ctl: &PathBuf, args: &[&str]) -> (bool, String) {
    let o = Command::new(ecat)
        .args(args)
        .env("ECAT_CONTROL_DIR", ctl)
        .env_remove("ECAT_INTERFACE")
        .output()
        .expect("run ecat");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

#[test]
fn ecat_tool_beside_a_c_program_over_veth() {
    if !netns::is_root() {
        println!("skipped: needs root (veth pair and network namespace)");
        return;
    }
    if common::missing(&["cc", "ip", "chrt", "taskset"]) {
        return;
    }
    let Some(ecat) = ecat_binary() else {
        let msg = format!(
            "the ecat binary is not built in {} (cargo build -p ecat-cli)",
            common::target_dir().display()
        );
        assert!(std::env::var("CI").is_err(), "{msg}");
        println!("skipped: {msg}");
        return;
    };
    let v = match VethNs::create(&format!("capic{}", std::process::id() % 100000)) {
        Ok(v) => v,
        Err(e) => {
            println!("skipped: {e}");
            return;
        }
    };
    let cpu = if netns::cpus() > 1 { "1" } else { "0" };
    let sim = Command::new("ip")
        .args([
            "netns", "exec", &v.ns, "taskset", "-c", cpu, "chrt", "-f", "50",
        ])
        .arg(&ecat)
        .args(["sim", "-i", &v.far, "-n", "io"])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start ecat sim");
    let _sim = Reap(sim);

    let src = common::workspace().join("tests/capi/control_veth.c");
    let exe = common::scratch("capi").join("control_veth");
    common::compile(&[src], &exe, &[]);
    let ctl = common::scratch("capi").join(format!("ctl{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&ctl);
    let app = Command::new(&exe)
        .arg("10000")
        .env_remove("ECAT_INTERFACE")
        .env("ECAT_CONF", "/nonexistent/ecat.conf")
        .env("ECAT_MASTER0", format!("raw:{}", v.near))
        .env("ECAT_CONTROL_DIR", &ctl)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start control_veth");
    let mut app = Reap(app);

    // Wait for the application's master to cycle, then ask it things until it ends.
    let start = Instant::now();
    let mut rounds = 0;
    let mut problems = Vec::new();
    let mut operating = false;
    let mut last_master = String::new();
    while app.0.try_wait().ok().flatten().is_none() && start.elapsed() < Duration::from_secs(120) {
        if !operating {
            let (ok, out) = tool(&ecat, &ctl, &["master", "-m", "0"]);
            operating = ok && out.contains("Phase: Operation");
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        let (ok, slaves) = tool(&ecat, &ctl, &["slaves", "-m", "0"]);
        if app.0.try_wait().ok().flatten().is_some() {
            break; // the program ended while we asked
        }
        if !ok || slaves.lines().count() != 5 || !slaves.contains("EL3102") {
            problems.push(format!("ecat slaves -m 0:\n{slaves}"));
        }
        let (ok, vendor) = tool(
            &ecat,
            &ctl,
            &["upload", "-m", "0", "-p", "3", "0x1018", "1"],
        );
        if !ok || !vendor.starts_with("0x00000002") {
            problems.push(format!("ecat upload -m 0 -p 3 0x1018 1:\n{vendor}"));
        }
        let (ok, data) = tool(&ecat, &ctl, &["data", "-m", "0"]);
        if app.0.try_wait().ok().flatten().is_some() {
            break;
        }
        if !ok || !data.contains("complete (WKC 6/6)") || !data.contains("EL3102") {
            problems.push(format!("ecat data -m 0:\n{data}"));
        }
        if let (true, m) = tool(&ecat, &ctl, &["master", "-m", "0"]) {
            last_master = m;
        }
        rounds += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    let o = std::mem::replace(
        &mut app.0,
        Command::new("true").spawn().expect("spawn true"),
    )
    .wait_with_output()
    .expect("wait for control_veth");
    let out = String::from_utf8_lossy(&o.stdout);
    println!("{out}{}", String::from_utf8_lossy(&o.stderr));
    println!("{rounds} rounds of ecat slaves/upload/data -m 0 while it cycled; last ecat master -m 0:\n{last_master}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(o.status.success(), "control_veth failed: {out}");
    assert!(rounds >= 3, "only {rounds} rounds of tool requests ran");
    assert!(
        !ctl.join("master0.sock").exists(),
        "the socket was not removed at release"
    );
    drop(v);
}
