// The /directory page's script, run by the browser: plain ES2017, no dependencies, DOM built with
// textContent (nothing the relays say is parsed as HTML). It renders the embedded /directory.json
// document — figures, the views by network, software and NIP, the sortable, filterable table — and
// refetches it every REFRESH_MS. A row opens the relay's detail (#relay=<url>, fetched from
// /directory.json?relay=<url>): facts, a 30-day uptime bar and an RTT chart drawn as inline SVG.
// Every time is UTC.
export const DIRECTORY_SCRIPT = String.raw`
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var doc = JSON.parse(document.getElementById('initial').textContent);
  var order = { key: 'online', dir: -1 }, show = '', current = null, detailUrl = null;

  function byId(id) { return document.getElementById(id); }
  function make(tag, text, cls) { var n = document.createElement(tag); if (text !== undefined && text !== null) n.textContent = String(text); if (cls) n.className = cls; return n; }
  function shape(tag, attrs, tip) { var n = document.createElementNS(NS, tag); Object.keys(attrs).forEach(function (k) { n.setAttribute(k, attrs[k]); }); if (tip) { var t = document.createElementNS(NS, 'title'); t.textContent = tip; n.appendChild(t); } return n; }
  function two(n) { return (n < 10 ? '0' : '') + n; }
  function stamp(ms, withTime) {
    if (ms === null || ms === undefined) return '-';
    var d = new Date(ms);
    return d.getUTCFullYear() + '-' + two(d.getUTCMonth() + 1) + '-' + two(d.getUTCDate()) + (withTime === false ? '' : ' ' + two(d.getUTCHours()) + ':' + two(d.getUTCMinutes()) + ' UTC');
  }
  function ago(ms) { if (!ms) return ''; var s = Math.round((doc.generatedAt - ms) / 1000); return s < 90 ? s + ' s ago' : s < 5400 ? Math.round(s / 60) + ' min ago' : s < 172800 ? Math.round(s / 3600) + ' h ago' : Math.round(s / 86400) + ' d ago'; }
  function share(v) { return v === null || v === undefined ? '-' : (v * 100).toFixed(v === 1 || v === 0 ? 0 : 1) + '%'; }
  function millis(v) { return v === null || v === undefined ? '-' : v + ' ms'; }
  function count(n) { return n === null || n === undefined ? '-' : Number(n).toLocaleString('en-US'); }
  function grid(head, rows, cls) {
    var t = make('table', null, cls || 'plain');
    if (head) { var h = make('thead'), tr = make('tr'); head.forEach(function (x) { tr.appendChild(make('th', x)); }); h.appendChild(tr); t.appendChild(h); }
    var b = make('tbody');
    rows.forEach(function (r) { var tr = make('tr'); r.forEach(function (c, i) { if (c instanceof Node) { var td = make('td'); td.appendChild(c); tr.appendChild(td); } else tr.appendChild(make(i === 0 ? 'th' : 'td', c)); }); b.appendChild(tr); });
    t.appendChild(b);
    return t;
  }
  // NIP-11 software is often a repository URL: its last path segment names it (the full text is the tooltip)
  function softName(s) { if (!s) return s; var m = /([^\/:]+?)(?:\.git)?\/?$/.exec(s); return m ? m[1] : s; }
  function labelled(text, tip) { var n = make('span', text); if (tip && tip !== text) n.title = tip; return n; }
  function bar(n, max) { var b = make('span', null, 'bar'); b.style.width = (max ? Math.max(2, Math.round(80 * n / max)) : 0) + 'px'; return b; }

  // ---- figures and views ------------------------------------------------------------------
  function renderSummary() {
    var s = doc.summary, m = doc.monitor;
    byId('f-total').textContent = count(doc.total);
    byId('f-checked').textContent = count(s.checked);
    byId('f-now').textContent = count(s.online.now);
    byId('f-day').textContent = count(s.online.day);
    byId('f-week').textContent = count(s.online.week);
    byId('f-candidates').textContent = count(doc.candidates.total);
    byId('f-candidates-sub').textContent = Object.keys(doc.candidates.bySource).map(function (k) { return k + ' ' + doc.candidates.bySource[k]; }).join(' · ') || 'none waiting';
    byId('as-of').textContent = 'as of ' + stamp(doc.generatedAt);
    byId('monitor-line').textContent = m.enabled
      ? 'monitor ' + (m.npub || '').slice(0, 16) + '…, every ' + Math.round(m.intervalMs / 60000) + ' min' + (m.running ? ', checking now' : m.nextCycle ? ', next cycle ' + stamp(m.nextCycle) : '')
      : (s.checked ? 'monitor off (figures from earlier checks)' : 'monitor off: ORBWEAVER_SPIDER_MONITOR=1 turns it on');
    var nets = Object.keys(s.byNetwork).map(function (k) { return [k, count(s.byNetwork[k])]; });
    byId('by-network').replaceChildren(nets.length ? grid(['network', 'relays'], nets) : make('p', 'no relay checked yet', 'muted'));
    var maxSoft = s.bySoftware.reduce(function (a, g) { return Math.max(a, g.relays); }, 0);
    byId('by-software').replaceChildren(s.bySoftware.length ? grid(['software', 'version', 'relays', 'online', ''], s.bySoftware.slice(0, 20).map(function (g) { return [labelled(softName(g.software), g.software), g.version || '-', count(g.relays), count(g.online), bar(g.relays, maxSoft)]; })) : make('p', 'no relay checked yet', 'muted'));
    var maxNip = s.byNip.reduce(function (a, g) { return Math.max(a, g.relays); }, 0);
    var serving = (s.serving || []).map(function (g) { return ['NIP-' + g.nip, count(g.relays), g.fastest.slice(0, 3).map(function (f) { return f.url + ' ' + millis(f.rtt); }).join(', ') || '-']; });
    byId('serving').replaceChildren(serving.length ? grid(['NIP', 'online now', 'fastest'], serving) : make('p', 'no probes yet', 'muted'));
    byId('differing').textContent = s.differing ? s.differing + (s.differing === 1 ? ' relay claims' : ' relays claim') + ' otherwise than the probes saw (filter: differs)' : 'claims agree with the probes';
    byId('by-nip').replaceChildren(s.byNip.length ? grid(['NIP', 'relays', ''], s.byNip.map(function (g) { return ['NIP-' + (g.nip < 10 ? '0' : '') + g.nip, count(g.relays), bar(g.relays, maxNip)]; })) : make('p', 'no NIP-11 document seen yet', 'muted'));
  }

  // ---- the table ----------------------------------------------------------------------------
  var COLS = [
    { key: 'url', label: 'URL' },
    { key: 'online', label: 'now' },
    { key: 'uptimeDay', label: 'uptime 24 h', kind: 'pct' },
    { key: 'uptimeWeek', label: 'uptime 7 d', kind: 'pct' },
    { key: 'uptimeMonth', label: 'uptime 30 d', kind: 'pct' },
    { key: 'rttOpen', label: 'rtt open', kind: 'ms' },
    { key: 'rttRead', label: 'rtt read', kind: 'ms' },
    { key: 'rttOpenP50', label: 'open p50', kind: 'ms' },
    { key: 'network', label: 'network' },
    { key: 'software', label: 'software' },
    { key: 'version', label: 'version' },
    { key: 'nips', label: 'NIPs', kind: 'list' },
    { key: 'hop', label: 'hop', kind: 'hop' },
    { key: 'state', label: 'crawl' },
    { key: 'lastCheck', label: 'last check', kind: 'time' },
  ];
  var LIMIT = 2000;

  function value(r, key) {
    var v = r[key];
    if (key === 'online') return v === null ? null : v ? 1 : 0;
    if (key === 'nips') return v.length;
    if (key === 'hop') return v < 0 ? 1e9 : v;
    return v;
  }
  function compare(a, b) {
    var x = value(a, order.key), y = value(b, order.key);
    var ex = x === null || x === undefined || x === '', ey = y === null || y === undefined || y === '';
    if (ex || ey) return ex && ey ? (a.url < b.url ? -1 : 1) : ex ? 1 : -1;
    var c = typeof x === 'number' ? x - y : String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
    return c * order.dir || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
  }
  function status(r) { return r.online === null ? 'unchecked' : r.online ? 'online' : 'offline'; }
  function wanted(r, q) {
    if (show && status(r) !== show) return false;
    if (!q) return true;
    var text = [r.url, (r.aliases || []).join(' '), r.name || '', r.software || '', r.version || '', r.network || '', status(r), r.state, r.requirements.join(' '), r.nips.map(function (n) { return 'nip-' + n + ' nip' + n; }).join(' '), (r.differences || []).length ? 'differs ' + r.differences.join(' ') : ''].join(' ').toLowerCase();
    return q.split(/\s+/).every(function (w) { return text.indexOf(w) >= 0; });
  }

  function renderChips() {
    var counts = { online: 0, offline: 0, unchecked: 0 };
    doc.rows.forEach(function (r) { counts[status(r)]++; });
    var box = byId('chips');
    box.replaceChildren();
    [['', 'all ' + doc.total]].concat(Object.keys(counts).filter(function (k) { return counts[k]; }).map(function (k) { return [k, k + ' ' + counts[k]]; })).forEach(function (c) {
      var b = make('button', c[1], 'chip' + (show === c[0] ? ' on' : '') + (c[0] ? ' s-' + c[0] : ''));
      b.type = 'button'; b.setAttribute('data-show', c[0]);
      box.appendChild(b);
    });
  }

  function cell(r, c) {
    var v = r[c.key], td;
    if (c.key === 'url') {
      td = make('td', null, 'url');
      var a = make('a', v); a.href = '#relay=' + encodeURIComponent(v); if (r.name) a.title = r.name;
      td.appendChild(a);
      // one row per relay: the other URLs that reach it are named on it, not listed as relays
      if (r.aliases && r.aliases.length) { var al = make('span', ' +' + r.aliases.length + ' alias' + (r.aliases.length > 1 ? 'es' : ''), 'muted aliases'); al.title = r.aliases.join(', '); td.appendChild(al); }
    } else if (c.key === 'online') { td = make('td'); td.appendChild(make('span', status(r), 'pill s-' + status(r))); if (r.checkError) td.title = r.checkError; }
    else if (c.kind === 'pct') td = make('td', share(v), 'num');
    else if (c.kind === 'ms') td = make('td', millis(v), 'num');
    else if (c.kind === 'list') { td = make('td', v.length ? v.length : '-', 'num'); td.title = v.join(', '); }
    else if (c.kind === 'hop') { td = make('td', v < 0 ? 'found' : v, 'num'); if (v < 0) td.title = 'not on the spider\'s hops: found in stored events and validated'; }
    else if (c.kind === 'time') { td = make('td', v && stamp(v, false) === stamp(doc.generatedAt, false) ? stamp(v).slice(11) : stamp(v)); td.title = stamp(v) + ', ' + ago(v); }
    else if (c.key === 'software') { td = make('td', v ? softName(v) : '-'); if (v) td.title = v; }
    else td = make('td', v === null || v === undefined ? '-' : v);
    return td;
  }

  function renderTable() {
    var head = byId('relays').querySelector('thead tr');
    head.replaceChildren.apply(head, COLS.map(function (c) {
      var th = make('th', c.label + (order.key === c.key ? (order.dir > 0 ? ' ▲' : ' ▼') : ''), c.kind === 'pct' || c.kind === 'ms' || c.kind === 'list' || c.kind === 'hop' ? 'num' : '');
      th.setAttribute('data-key', c.key); th.title = 'sort by ' + c.label;
      return th;
    }));
    var q = byId('filter').value.trim().toLowerCase();
    var rows = doc.rows.filter(function (r) { return wanted(r, q); }).sort(compare);
    var body = byId('relays').querySelector('tbody');
    body.replaceChildren.apply(body, rows.slice(0, LIMIT).map(function (r) {
      var tr = make('tr', null, 's-' + status(r) + (r.url === detailUrl ? ' picked' : ''));
      tr.setAttribute('data-url', r.url);
      COLS.forEach(function (c) { tr.appendChild(cell(r, c)); });
      return tr;
    }));
    byId('shown').textContent = rows.length === doc.total ? doc.total + ' relays' : rows.length + ' of ' + doc.total + ' relays' + (rows.length > LIMIT ? ' (first ' + LIMIT + ' shown)' : '');
    renderChips();
  }

  // ---- one relay ------------------------------------------------------------------------------
  function niceMax(v) { if (!(v > 0)) return 10; var p = Math.pow(10, Math.floor(Math.log10(v))), m = v / p; return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p; }

  function uptimeBar(days) {
    var W = 30 * 12, g = shape('svg', { viewBox: '0 0 ' + W + ' 24', preserveAspectRatio: 'none', class: 'uptime', role: 'img', 'aria-label': 'uptime per day, the last 30 days' });
    days.forEach(function (d, i) {
      var r = d.checks ? d.online / d.checks : null;
      var cls = r === null ? 'none' : r >= 0.99 ? 'good' : r >= 0.9 ? 'fair' : 'poor';
      g.appendChild(shape('rect', { x: i * 12 + 1, y: 1, width: 10, height: 22, rx: 2, class: 'day ' + cls, 'data-day': stamp(d.day, false) }, stamp(d.day, false) + ': ' + (d.checks ? d.online + ' of ' + d.checks + ' checks online (' + share(r) + ')' : 'not checked')));
    });
    return g;
  }

  function rttChart(d) {
    var W = 600, H = 150, pts = d.checks, box = make('div', null, 'chart');
    if (!pts.length) { box.appendChild(make('p', 'no check in the window yet', 'muted')); return box; }
    var t0 = Math.min(pts[0][0], d.generatedAt - 3600000), t1 = d.generatedAt, max = 0;
    pts.forEach(function (p) { [p[2], p[3], p[4]].forEach(function (v) { if (v !== null && v > max) max = v; }); });
    max = niceMax(max);
    var x = function (t) { return ((t - t0) / Math.max(1, t1 - t0)) * W; }, y = function (v) { return H - 12 - (v / max) * (H - 18); };
    var g = shape('svg', { viewBox: '0 0 ' + W + ' ' + H, preserveAspectRatio: 'none', class: 'rtt', role: 'img', 'aria-label': 'round-trip times of the checks' });
    [0.5, 1].forEach(function (f) { g.appendChild(shape('line', { x1: 0, x2: W, y1: y(max * f), y2: y(max * f), class: 'grid' })); });
    var series = [{ i: 2, name: 'open', cls: 'open' }, { i: 3, name: 'read', cls: 'read' }, { i: 4, name: 'write', cls: 'write' }];
    series.forEach(function (s) {
      var path = '', pen = 'M';
      pts.forEach(function (p) { if (p[s.i] === null) { pen = 'M'; return; } path += pen + x(p[0]).toFixed(1) + ' ' + y(p[s.i]).toFixed(1) + ' '; pen = 'L'; });
      if (path) g.appendChild(shape('path', { d: path.trim(), class: 'line ' + s.cls }));
      pts.forEach(function (p) { if (p[s.i] !== null) g.appendChild(shape('circle', { cx: x(p[0]).toFixed(1), cy: y(p[s.i]).toFixed(1), r: 1.8, class: 'dot ' + s.cls }, stamp(p[0]) + ': ' + s.name + ' ' + p[s.i] + ' ms')); });
    });
    pts.forEach(function (p) { if (!p[1]) g.appendChild(shape('rect', { x: (x(p[0]) - 1).toFixed(1), y: H - 10, width: 2, height: 10, class: 'down' }, stamp(p[0]) + ': offline')); });
    box.appendChild(make('span', millis(max), 'ymax'));
    box.appendChild(g);
    var axis = make('div', null, 'axis'); axis.appendChild(make('span', stamp(t0))); axis.appendChild(make('span', stamp(t1))); box.appendChild(axis);
    var legend = make('div', null, 'legend'), st = d.stats;
    [['open', st.rttOpen], ['read', st.rttRead]].forEach(function (l) { var k = make('span', l[0] + ' p50 ' + millis(l[1].p50) + ' · p90 ' + millis(l[1].p90) + ' · p99 ' + millis(l[1].p99), 'key ' + l[0]); legend.appendChild(k); });
    legend.appendChild(make('span', 'write', 'key write'));
    legend.appendChild(make('span', 'offline', 'key down'));
    box.appendChild(legend);
    return box;
  }

  // One row per NIP probed, one cell per check: what the probe saw, coloured like the uptime bar
  // (served green, empty or silent amber, refused or wrong red, skipped grey); each cell's title
  // names the check and the outcome, and the legend counts the outcomes over the window.
  var PROBE_CLASS = { served: 'good', empty: 'fair', silent: 'fair', refused: 'poor', wrong: 'poor', skipped: 'none' };
  function probeChart(d) {
    var nips = Object.keys(d.probeStats || {}).sort(function (a, b) { return a - b; });
    var pts = d.probes.slice(-60), cell = 12, label = 56, row = 16;
    var W = label + pts.length * cell, H = nips.length * row;
    var box = make('div', null, 'chart');
    var g = shape('svg', { viewBox: '0 0 ' + W + ' ' + H, class: 'probes', role: 'img', 'aria-label': 'probe outcomes per NIP over the checks', style: 'max-width:' + W + 'px' });
    nips.forEach(function (n, i) {
      var t = shape('text', { x: 0, y: i * row + 12, class: 'nip' }); t.textContent = 'NIP-' + n; g.appendChild(t);
      pts.forEach(function (p, j) {
        var o = p[1][n];
        g.appendChild(shape('rect', { x: label + j * cell + 1, y: i * row + 2, width: cell - 2, height: row - 4, rx: 2, class: 'day ' + (o ? PROBE_CLASS[o] || 'none' : 'none'), 'data-nip': n, 'data-outcome': o || '' },
          stamp(p[0]) + ': NIP-' + n + ' ' + (o || 'not probed')));
      });
    });
    box.appendChild(g);
    var legend = make('div', null, 'legend');
    nips.forEach(function (n) {
      var st = d.probeStats[n];
      legend.appendChild(make('span', 'NIP-' + n + ': ' + Object.keys(st).map(function (o) { return o + ' ' + st[o]; }).join(' · ')));
    });
    box.appendChild(legend);
    return box;
  }

  function renderDetail() {
    var box = byId('detail');
    if (!current) { box.hidden = true; return; }
    var d = current, r = d.row || {};
    box.hidden = false;
    var head = make('div', null, 'detail-head');
    head.appendChild(make('h2', d.url, 'url'));
    var close = make('button', 'close', 'close'); close.type = 'button'; close.id = 'close-detail'; head.appendChild(close);
    var facts = [
      ['name', r.name || '-'],
      ['aliases', r.aliases && r.aliases.length ? r.aliases.join(', ') + ' (other URLs that reach this relay)' : '-'],
      ['now', r.online === null || r.online === undefined ? 'not checked yet' : (r.online ? 'online' : 'offline') + ' at ' + stamp(r.lastCheck) + (r.checkError ? ' (' + r.checkError + ')' : '')],
      ['uptime', '24 h ' + share(d.stats.uptimeDay) + ' · 7 d ' + share(d.stats.uptimeWeek) + ' · 30 d ' + share(d.stats.uptimeMonth) + ' (' + d.checksInWindow + ' checks)'],
      ['software', [r.software, r.version].filter(Boolean).join(' ') || '-'],
      ['network', r.network || '-'],
      ['NIPs', r.nips && r.nips.length ? r.nips.join(', ') + ' (published: claims corrected by the probes)' : '-'],
      ['NIPs claimed', r.claimedNips && r.claimedNips.length ? r.claimedNips.join(', ') : '-'],
      ['probes', r.probes && Object.keys(r.probes).length ? Object.keys(r.probes).map(function (n) { return 'NIP-' + n + ' ' + r.probes[n]; }).join(', ') + (d.probeReport && d.probeReport.cut ? ' (cut short: ' + d.probeReport.cut + ')' : '') : '-'],
      ['differences', r.differences && r.differences.length ? r.differences.join('; ') : 'none'],
      ['requirements', r.requirements && r.requirements.length ? r.requirements.join(', ') : '-'],
      ['certificate', r.sslExpires ? (r.sslValid ? 'valid' : 'NOT valid') + ', expires ' + stamp(r.sslExpires) + (r.sslIssuer ? ', issued by ' + r.sslIssuer : '') : '-'],
      ['crawl', r.state ? r.state + (r.hop >= 0 ? ' · hop ' + r.hop : ' · found by the finder') + ' · last ' + stamp(r.lastCrawl) : '-'],
      ['first checked', stamp(d.firstChecked)],
      ['latest 30166', d.published || '-'],
    ];
    var parts = [head, grid(null, facts, 'facts')];
    parts.push(make('h3', 'Uptime per day, the last 30 days (UTC)'));
    parts.push(uptimeBar(d.days));
    parts.push(make('h3', 'Round-trip times of the checks'));
    parts.push(rttChart(d));
    if (d.probes && d.probes.length) {
      parts.push(make('h3', 'Probe history (one column per check, oldest left)'));
      parts.push(probeChart(d));
    }
    if (d.crawl) {
      parts.push(make('h3', 'Events per kind from the crawl'));
      parts.push(grid(['kind', 'last crawl', 'all crawls'], Object.keys(d.crawl.total).sort(function (a, b) { return a - b; }).map(function (k) { return [k, count(d.crawl.last[k] || 0), count(d.crawl.total[k])]; })));
    }
    if (d.nip11) {
      var more = make('details'); more.appendChild(make('summary', 'NIP-11 document')); more.appendChild(make('pre', JSON.stringify(d.nip11, null, 2)));
      parts.push(more);
    }
    box.replaceChildren.apply(box, parts);
    byId('close-detail').addEventListener('click', function () { location.hash = ''; });
  }

  function openDetail(url) {
    detailUrl = url;
    if (!url) { current = null; renderDetail(); renderTable(); return; }
    fetch('/directory.json?relay=' + encodeURIComponent(url), { cache: 'no-store' })
      .then(function (res) { if (!res.ok) throw new Error('HTTP ' + res.status); return res.json(); })
      .then(function (d) { if (detailUrl !== url) return; current = d; renderDetail(); renderTable(); byId('detail').scrollIntoView({ block: 'nearest' }); })
      .catch(function (e) { byId('detail').hidden = false; byId('detail').replaceChildren(make('p', 'could not load ' + url + ': ' + e.message, 'muted')); });
  }
  function fromHash() { var m = /^#relay=(.+)$/.exec(location.hash); openDetail(m ? decodeURIComponent(m[1]) : null); }

  byId('relays').querySelector('thead').addEventListener('click', function (ev) {
    var th = ev.target.closest('th'); if (!th) return;
    var key = th.getAttribute('data-key');
    order = order.key === key ? { key: key, dir: -order.dir } : { key: key, dir: key === 'url' || key === 'network' || key === 'software' || key === 'version' || key === 'state' ? 1 : -1 };
    renderTable();
  });
  byId('relays').querySelector('tbody').addEventListener('click', function (ev) {
    if (ev.target.closest('a')) return;
    var tr = ev.target.closest('tr'); if (tr) location.hash = 'relay=' + encodeURIComponent(tr.getAttribute('data-url'));
  });
  byId('chips').addEventListener('click', function (ev) { var b = ev.target.closest('button'); if (!b) return; show = b.getAttribute('data-show'); renderTable(); });
  byId('filter').addEventListener('input', renderTable);
  window.addEventListener('hashchange', fromHash);

  function refresh() {
    fetch('/directory.json', { cache: 'no-store' })
      .then(function (res) { if (!res.ok) throw new Error('HTTP ' + res.status); return res.json(); })
      .then(function (d) { doc = d; document.body.classList.remove('stale'); renderSummary(); renderTable(); if (detailUrl) openDetail(detailUrl); })
      .catch(function () { document.body.classList.add('stale'); })
      .then(function () { setTimeout(refresh, REFRESH_MS); });
  }

  renderSummary();
  renderTable();
  fromHash();
  document.body.setAttribute('data-ready', '1');
  setTimeout(refresh, REFRESH_MS);
})();
`;
