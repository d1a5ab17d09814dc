// The calendar's day menu, made a little quicker with a keyboard; everything works without it.
// Arrow keys move between the days of the month grid; Escape closes the Show sections menu and
// gives focus back to its button.
(function () {
  "use strict";
  var links = Array.prototype.slice.call(document.querySelectorAll("table.month a.date"));
  links.forEach(function (link, index) {
    link.addEventListener("keydown", function (event) {
      var step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -7, ArrowDown: 7 }[event.key];
      if (step === undefined) return;
      var target = links[index + step];
      if (target) {
        event.preventDefault();
        target.focus();
      }
    });
  });
  var menu = document.querySelector("details.menu");
  if (menu) {
    menu.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && menu.open) {
        menu.open = false;
        menu.querySelector("summary").focus();
      }
    });
  }
  // After choosing a day, its panel is where the reader's attention goes.
  if (location.hash === "#day-panel") {
    var panel = document.getElementById("day-panel");
    if (panel) panel.focus({ preventScroll: false });
  }
})();
