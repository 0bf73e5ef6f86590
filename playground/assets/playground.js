// Boots GraphiQL (project-owned). Reads its settings from the JSON element
// #playground-config written by playground.Handler:
//   {"endpoint": string, "query": string?, "headers": string? (a JSON object as text)}
// Requests are POSTed to endpoint as JSON with the headers from the headers
// editor; Content-Type is always application/json (the server refuses simple
// content types as a CSRF measure).
(function () {
  'use strict';

  var cfg = JSON.parse(document.getElementById('playground-config').textContent);

  function errorResult(message) {
    return { errors: [{ message: message }] };
  }

  function fetcher(params, opts) {
    var headers;
    try {
      headers = new Headers((opts && opts.headers) || {});
    } catch (e) {
      return Promise.resolve(errorResult('invalid request headers: ' + e.message));
    }
    headers.set('Content-Type', 'application/json');
    headers.set('Accept', 'application/json');
    return fetch(cfg.endpoint, {
      method: 'POST',
      headers: headers,
      body: JSON.stringify(params),
      credentials: 'same-origin'
    }).then(function (res) {
      return res.text().then(function (text) {
        try {
          return JSON.parse(text);
        } catch (e) {
          return errorResult('HTTP ' + res.status + ' (not JSON): ' + text.slice(0, 500));
        }
      });
    }, function (err) {
      return errorResult('request failed: ' + err.message);
    });
  }

  var props = {
    fetcher: fetcher,
    shouldPersistHeaders: false,
    isHeadersEditorEnabled: true,
    defaultEditorToolsVisibility: 'headers'
  };
  if (typeof cfg.query === 'string') {
    props.defaultQuery = cfg.query;
  }
  if (typeof cfg.headers === 'string') {
    props.defaultHeaders = cfg.headers;
  }
  if (typeof cfg.variables === 'string') {
    // GraphiQL has no defaultVariables: a first tab carries them (used only
    // when the browser has no saved tabs, like defaultQuery).
    props.defaultTabs = [{query: cfg.query || '', variables: cfg.variables, headers: cfg.headers}];
  }

  var root = ReactDOM.createRoot(document.getElementById('graphiql'));
  root.render(React.createElement(GraphiQL, props));
})();
