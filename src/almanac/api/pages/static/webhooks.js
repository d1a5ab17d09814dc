// The webhooks page's register form: only the chosen owner's plug-ins are shown (without this
// script every owner's are, each under its own legend, and the chosen owner's alone count).
"use strict";
(() => {
  const owner = document.getElementById("owner");
  if (!owner) return;
  const show = () => {
    for (const choice of document.querySelectorAll("fieldset[data-owner]")) {
      const chosen = choice.dataset.owner === owner.value;
      choice.hidden = !chosen;
      choice.disabled = !chosen;
    }
  };
  owner.addEventListener("change", show);
  show();
})();
