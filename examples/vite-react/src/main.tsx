import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";
import { readSettings } from "./settings.js";

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App settings={readSettings(location.search)} />
  </StrictMode>,
);
