// app.js: the todo list: add, toggle, delete, filter, clear completed; kept in localStorage.
(function () {
  "use strict";

  var STORAGE_KEY = "svc-todo-app:v1";
  var FILTER_KEY = "svc-todo-app:filter";
  var FILTERS = ["all", "active", "completed"];
  var MAX_TITLE = 200;

  var form = document.getElementById("new-todo-form");
  var input = document.getElementById("new-todo");
  var list = document.getElementById("todo-list");
  var emptyState = document.getElementById("empty-state");
  var toolbar = document.getElementById("toolbar");
  var count = document.getElementById("todo-count");
  var clearButton = document.getElementById("clear-completed");
  var filterButtons = Array.prototype.slice.call(document.querySelectorAll("[data-filter]"));

  var todos = load();
  var filter = loadFilter();

  // ---- storage ----

  function load() {
    try {
      var raw = window.localStorage.getItem(STORAGE_KEY);
      var parsed = raw ? JSON.parse(raw) : [];
      if (!Array.isArray(parsed)) return [];
      return parsed
        .filter(function (t) {
          return t && typeof t.id === "string" && typeof t.title === "string";
        })
        .map(function (t) {
          return { id: t.id, title: t.title.slice(0, MAX_TITLE), completed: t.completed === true };
        });
    } catch (e) {
      return []; // storage disabled or corrupt: start empty rather than fail
    }
  }

  function save() {
    try {
      window.localStorage.setItem(STORAGE_KEY, JSON.stringify(todos));
    } catch (e) {
      // private mode or full storage: the list still works for this visit
    }
  }

  function loadFilter() {
    var fromHash = window.location.hash.replace(/^#\/?/, "");
    if (FILTERS.indexOf(fromHash) >= 0) return fromHash;
    try {
      var stored = window.localStorage.getItem(FILTER_KEY);
      if (FILTERS.indexOf(stored) >= 0) return stored;
    } catch (e) {
      // ignore
    }
    return "all";
  }

  function newId() {
    if (window.crypto && typeof window.crypto.randomUUID === "function") return window.crypto.randomUUID();
    return Date.now().toString(36) + Math.random().toString(36).slice(2);
  }

  // ---- changes ----

  function addTodo(title) {
    var clean = title.replace(/\s+/g, " ").trim().slice(0, MAX_TITLE);
    if (!clean) return false;
    todos.push({ id: newId(), title: clean, completed: false });
    save();
    render();
    return true;
  }

  function toggleTodo(id) {
    todos.forEach(function (t) {
      if (t.id === id) t.completed = !t.completed;
    });
    save();
    render();
  }

  function deleteTodo(id) {
    var index = indexOf(id);
    if (index < 0) return;
    todos.splice(index, 1);
    save();
    render();
    focusAfterRemoval(index);
  }

  function clearCompleted() {
    todos = todos.filter(function (t) {
      return !t.completed;
    });
    save();
    render();
    input.focus();
  }

  function setFilter(name) {
    if (FILTERS.indexOf(name) < 0) return;
    filter = name;
    try {
      window.localStorage.setItem(FILTER_KEY, name);
    } catch (e) {
      // ignore
    }
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", name === "all" ? window.location.pathname : "#/" + name);
    }
    render();
  }

  function indexOf(id) {
    for (var i = 0; i < todos.length; i++) if (todos[i].id === id) return i;
    return -1;
  }

  // After a delete, keep the keyboard user in the list: the next item, else the previous, else the input.
  function focusAfterRemoval(index) {
    var toggles = list.querySelectorAll(".toggle");
    if (toggles.length === 0) {
      input.focus();
      return;
    }
    toggles[Math.min(index, toggles.length - 1)].focus();
  }

  // ---- view ----

  function visible(t) {
    if (filter === "active") return !t.completed;
    if (filter === "completed") return t.completed;
    return true;
  }

  function renderItem(t) {
    var li = document.createElement("li");
    li.className = "todo" + (t.completed ? " is-completed" : "");
    li.dataset.id = t.id;

    var checkboxId = "todo-" + t.id;
    var checkbox = document.createElement("input");
    checkbox.type = "checkbox";
    checkbox.className = "toggle";
    checkbox.id = checkboxId;
    checkbox.checked = t.completed;

    var label = document.createElement("label");
    label.htmlFor = checkboxId;
    label.className = "title";
    label.textContent = t.title; // text only: a title can never become markup

    var remove = document.createElement("button");
    remove.type = "button";
    remove.className = "delete";
    remove.setAttribute("aria-label", "Delete \u201c" + t.title + "\u201d");
    remove.title = "Delete";
    remove.textContent = "\u00d7";

    li.appendChild(checkbox);
    li.appendChild(label);
    li.appendChild(remove);
    return li;
  }

  function render() {
    var shown = todos.filter(visible);
    var left = todos.filter(function (t) {
      return !t.completed;
    }).length;
    var done = todos.length - left;

    list.textContent = "";
    shown.forEach(function (t) {
      list.appendChild(renderItem(t));
    });

    emptyState.hidden = shown.length > 0;
    if (todos.length === 0) emptyState.textContent = "Nothing here yet. Add your first todo above.";
    else if (filter === "active") emptyState.textContent = "All done. Nice work!";
    else emptyState.textContent = "No completed todos yet.";

    toolbar.hidden = todos.length === 0;
    count.textContent = left + (left === 1 ? " item left" : " items left");
    clearButton.hidden = done === 0;
    filterButtons.forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.dataset.filter === filter));
    });
  }

  // ---- events ----

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (addTodo(input.value)) input.value = "";
    input.focus();
  });

  input.addEventListener("keydown", function (event) {
    if (event.key === "Escape") input.value = "";
  });

  list.addEventListener("change", function (event) {
    var li = event.target.closest(".todo");
    if (li && event.target.classList.contains("toggle")) toggleTodo(li.dataset.id);
    var again = li && list.querySelector('[data-id="' + cssEscape(li.dataset.id) + '"] .toggle');
    if (again) again.focus();
  });

  list.addEventListener("click", function (event) {
    var button = event.target.closest(".delete");
    if (button) deleteTodo(button.closest(".todo").dataset.id);
  });

  list.addEventListener("keydown", function (event) {
    var li = event.target.closest(".todo");
    if (!li) return;
    if (event.key === "Delete" && event.target.classList.contains("toggle")) {
      event.preventDefault();
      deleteTodo(li.dataset.id);
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      var toggles = Array.prototype.slice.call(list.querySelectorAll(".toggle"));
      var at = toggles.indexOf(li.querySelector(".toggle"));
      var next = toggles[at + (event.key === "ArrowDown" ? 1 : -1)];
      if (next) {
        event.preventDefault();
        next.focus();
      }
    }
  });

  filterButtons.forEach(function (b) {
    b.addEventListener("click", function () {
      setFilter(b.dataset.filter);
    });
  });

  clearButton.addEventListener("click", clearCompleted);

  window.addEventListener("hashchange", function () {
    var name = window.location.hash.replace(/^#\/?/, "") || "all";
    if (FILTERS.indexOf(name) >= 0 && name !== filter) setFilter(name);
  });

  // Another tab changed the list: show it here too.
  window.addEventListener("storage", function (event) {
    if (event.key === STORAGE_KEY) {
      todos = load();
      render();
    }
  });

  function cssEscape(value) {
    return window.CSS && CSS.escape ? CSS.escape(value) : value.replace(/["\\]/g, "\\$&");
  }

  render();
})();
