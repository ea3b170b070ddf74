// The look the directory pages share (/directory and /directory/people): their style sheet and
// their figure cards. Here, not in one of the two pages, so neither module depends on the other.

/** The directory pages' style (/directory in monitor/page.ts, /directory/people in trust/people.ts). */
export const DIRECTORY_CSS = `
:root{--fg:#1c2228;--muted:#67717c;--line:#e1e5ea;--panel:#f5f7f9;--link:#2f64c8;--up:#23955a;--warn:#c27a1e;--down:#cf3f52;--open:#2f64c8;--read:#7a4fc4;--write:#c27a1e}
@media (prefers-color-scheme:dark){:root{--fg:#e0e4e8;--muted:#939ca6;--line:#2c333a;--panel:#1a1f25;--link:#76a0f2}body{background:#111519}}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);max-width:84em;margin:1.4em auto;padding:0 1.2em}
body.stale .figs,body.stale main{opacity:.55}
a{color:var(--link)}
header{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:flex-end;gap:.4em 2em;border-bottom:1px solid var(--line);padding-bottom:.7em}
header h1{margin:0;font-size:1.55em;font-weight:650}
.sub{color:var(--muted);font-size:.85em;margin:.4em 0 0}
.figs{display:grid;grid-template-columns:repeat(auto-fit,minmax(10em,1fr));gap:.6em;margin:1em 0}
.fig{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:.55em .8em}
.fig .k{color:var(--muted);font-size:.78em;text-transform:uppercase;letter-spacing:.04em}
.fig .v{font-size:1.6em;font-weight:650;font-variant-numeric:tabular-nums}
.fig .s{color:var(--muted);font-size:.78em}
.views{display:grid;grid-template-columns:minmax(10em,1fr) minmax(18em,2fr) minmax(12em,1.3fr);gap:0 2em}
@media (max-width:60em){.views{grid-template-columns:1fr}}
.views section{max-height:22em;overflow:auto}
h2{font-size:1.05em;margin:1.4em 0 .5em;padding-bottom:.2em;border-bottom:1px solid var(--line)}
h3{font-size:.92em;margin:1.1em 0 .4em}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{text-align:left;padding:.16em 1.1em .16em 0;vertical-align:top}
th{font-weight:500;color:var(--muted)}
.bar{display:inline-block;height:.55em;background:var(--link);opacity:.6;border-radius:2px}
.muted{color:var(--muted)}
.tools{display:flex;flex-wrap:wrap;gap:.5em;align-items:center;margin-bottom:.5em}
#filter{font:inherit;padding:.25em .5em;border:1px solid var(--line);border-radius:6px;min-width:20em;background:transparent;color:var(--fg)}
button{font:inherit;font-size:.85em;border:1px solid var(--line);background:var(--panel);color:var(--fg);border-radius:6px;padding:.2em .7em;cursor:pointer}
.chip{border-radius:999px;padding:.1em .7em}.chip.on{background:var(--link);border-color:var(--link);color:#fff}
#shown{color:var(--muted);font-size:.85em}
.wide{overflow-x:auto}
#relays{width:100%;font-size:.87em}
#relays thead th{position:sticky;top:0;background:Canvas;cursor:pointer;white-space:nowrap;border-bottom:1px solid var(--line);user-select:none}
#relays td{border-bottom:1px solid var(--line);white-space:nowrap}
#relays tbody tr{cursor:pointer}#relays tbody tr:hover,#relays tr.picked{background:var(--panel)}
#relays td.url{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
#relays .num,#relays th.num{text-align:right;padding-right:1.4em}
.pill{display:inline-block;border-radius:999px;padding:0 .55em;font-size:.85em;border:1px solid var(--line)}
.pill.s-online{color:var(--up);border-color:var(--up)}.pill.s-offline{color:var(--down);border-color:var(--down)}.pill.s-unchecked{color:var(--muted)}
#detail{border:1px solid var(--line);border-radius:8px;padding:.2em 1em 1em;margin:1em 0}
.detail-head{display:flex;justify-content:space-between;align-items:center;gap:1em}
.detail-head h2{border:0;margin:.7em 0 .2em;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table.facts th{white-space:nowrap}
svg.uptime{display:block;width:100%;max-width:46em;height:2.2em}
svg.probes{display:block;width:100%;height:auto}svg.probes .nip{font-size:10px;fill:var(--muted)}
.day.good{fill:var(--up)}.day.fair{fill:var(--warn)}.day.poor{fill:var(--down)}.day.none{fill:var(--line)}
.chart{position:relative;max-width:46em}
svg.rtt{display:block;width:100%;height:150px;border-bottom:1px solid var(--line)}
.rtt .grid{stroke:var(--line);vector-effect:non-scaling-stroke}
.rtt .line{fill:none;stroke-width:1.5;vector-effect:non-scaling-stroke}
.rtt .open{stroke:var(--open);fill:var(--open)}.rtt .read{stroke:var(--read);fill:var(--read)}.rtt .write{stroke:var(--write);fill:var(--write)}
.rtt .line.open,.rtt .line.read,.rtt .line.write{fill:none}
.rtt .down{fill:var(--down)}
.ymax{position:absolute;top:0;left:.2em;font-size:.72em;color:var(--muted)}
.axis{display:flex;justify-content:space-between;font-size:.72em;color:var(--muted)}
.legend{font-size:.8em;color:var(--muted);display:flex;flex-wrap:wrap;gap:.3em 1.2em;margin-top:.2em}
.legend .key::before{content:"";display:inline-block;width:.8em;height:.3em;margin-right:.35em;vertical-align:.2em;background:currentColor}
.legend .open{color:var(--open)}.legend .read{color:var(--read)}.legend .write{color:var(--write)}.legend .down{color:var(--down)}
pre{background:var(--panel);padding:.6em;border-radius:6px;overflow:auto;max-height:24em;font-size:.82em}
footer{margin:2em 0 1em;color:var(--muted);font-size:.8em}
`;

/** One figure card of the directory pages: a label, a value (given, or filled in by the page's script) and a line under it. */
export const fig = (id: string, label: string, sub = '', value = '-') => `<div class="fig"><div class="k">${label}</div><div class="v" id="f-${id}">${value}</div><div class="s" id="f-${id}-sub">${sub}</div></div>`;
