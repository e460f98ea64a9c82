package dashboards

import (
	"maps"
	"slices"
	"strings"
)

// The parts of Grafana's classic dashboard JSON model that these dashboards
// use. Field order follows Grafana's own exports, so the files diff well
// against a dashboard saved from the UI.

// schemaVersion is the latest classic-model schema version (Grafana 12 and
// 13), so Grafana runs no migration when it loads the files.
const schemaVersion = 42

// Dashboard is one dashboard file.
type Dashboard struct {
	Annotations   Annotations `json:"annotations"`
	Description   string      `json:"description"`
	Editable      bool        `json:"editable"`
	GraphTooltip  int         `json:"graphTooltip"` // 1: shared crosshair
	Links         []Link      `json:"links"`
	Panels        []*Panel    `json:"panels"`
	Refresh       string      `json:"refresh"`
	SchemaVersion int         `json:"schemaVersion"`
	Tags          []string    `json:"tags"`
	Templating    Templating  `json:"templating"`
	Time          TimeRange   `json:"time"`
	Timezone      string      `json:"timezone"`
	Title         string      `json:"title"`
	UID           string      `json:"uid"`
	Version       int         `json:"version"`
}

// Annotations hold Grafana's built-in annotation and our queries.
type Annotations struct {
	List []Annotation `json:"list"`
}

// Annotation is one annotation query.
type Annotation struct {
	BuiltIn     int               `json:"builtIn,omitempty"`
	Datasource  *Datasource       `json:"datasource"`
	Enable      bool              `json:"enable"`
	Expr        string            `json:"expr,omitempty"`
	Hide        bool              `json:"hide"`
	IconColor   string            `json:"iconColor"`
	Name        string            `json:"name"`
	Step        string            `json:"step,omitempty"`
	TagKeys     string            `json:"tagKeys,omitempty"`
	TitleFormat string            `json:"titleFormat,omitempty"`
	Type        string            `json:"type,omitempty"`
	Target      *AnnotationTarget `json:"target,omitempty"`
}

// AnnotationTarget is the target of the built-in annotation query.
type AnnotationTarget struct {
	Limit    int      `json:"limit"`
	MatchAny bool     `json:"matchAny"`
	Tags     []string `json:"tags"`
	Type     string   `json:"type"`
}

// Link is a dashboard link; these link the inferprobe dashboards together.
type Link struct {
	AsDropdown  bool     `json:"asDropdown"`
	IncludeVars bool     `json:"includeVars"`
	KeepTime    bool     `json:"keepTime"`
	Tags        []string `json:"tags"`
	Title       string   `json:"title"`
	Type        string   `json:"type"`
}

// Datasource refers to a data source by uid; ours is always ${datasource}.
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Panel is a panel or a row.
type Panel struct {
	Collapsed   *bool          `json:"collapsed,omitempty"` // rows only
	Datasource  *Datasource    `json:"datasource,omitempty"`
	Description string         `json:"description,omitempty"`
	FieldConfig *FieldConfig   `json:"fieldConfig,omitempty"`
	GridPos     GridPos        `json:"gridPos"`
	ID          int            `json:"id"`
	Options     map[string]any `json:"options,omitempty"`
	Panels      []*Panel       `json:"panels,omitempty"` // rows only, and only when collapsed
	Targets     []Target       `json:"targets,omitempty"`
	Title       string         `json:"title"`
	Type        string         `json:"type"`
}

// GridPos places a panel on the 24-column grid.
type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// FieldConfig holds the unit and display settings of a panel's fields.
type FieldConfig struct {
	Defaults  FieldDefaults `json:"defaults"`
	Overrides []Override    `json:"overrides"`
}

// FieldDefaults apply to every field of a panel.
type FieldDefaults struct {
	Color      map[string]any `json:"color,omitempty"`
	Custom     map[string]any `json:"custom,omitempty"`
	Decimals   *int           `json:"decimals,omitempty"`
	Mappings   []any          `json:"mappings"`
	Max        *float64       `json:"max,omitempty"`
	Min        *float64       `json:"min,omitempty"`
	Thresholds Thresholds     `json:"thresholds"`
	Unit       string         `json:"unit"`
}

// Thresholds colour values; the first step's value is null (the base).
type Thresholds struct {
	Mode  string `json:"mode"`
	Steps []Step `json:"steps"`
}

// Step is one threshold.
type Step struct {
	Color string   `json:"color"`
	Value *float64 `json:"value"`
}

// Override changes field settings for the fields a matcher selects.
type Override struct {
	Matcher    Matcher    `json:"matcher"`
	Properties []Property `json:"properties"`
}

// Matcher selects fields, here by the query that produced them.
type Matcher struct {
	ID      string `json:"id"`
	Options string `json:"options"`
}

// Property is one overridden setting.
type Property struct {
	ID    string `json:"id"`
	Value any    `json:"value"`
}

// Target is one Prometheus query of a panel.
type Target struct {
	Datasource   *Datasource `json:"datasource"`
	EditorMode   string      `json:"editorMode"`
	Expr         string      `json:"expr"`
	Format       string      `json:"format"`
	Instant      bool        `json:"instant"`
	LegendFormat string      `json:"legendFormat"`
	Range        bool        `json:"range"`
	RefID        string      `json:"refId"`
	// Exemplar asks Prometheus for the query's exemplars, which name the
	// request behind a point (request_id, trace_id).
	Exemplar bool `json:"exemplar,omitempty"`
}

// Templating holds the dashboard's variables.
type Templating struct {
	List []Variable `json:"list"`
}

// Variable is a template variable: the data source, or label values.
type Variable struct {
	AllValue    string      `json:"allValue,omitempty"`
	Current     any         `json:"current"`
	Datasource  *Datasource `json:"datasource,omitempty"`
	Definition  string      `json:"definition,omitempty"`
	Description string      `json:"description,omitempty"`
	Hide        int         `json:"hide"`
	IncludeAll  bool        `json:"includeAll"`
	Label       string      `json:"label"`
	Multi       bool        `json:"multi"`
	Name        string      `json:"name"`
	Options     []any       `json:"options"`
	Query       any         `json:"query"`
	Refresh     int         `json:"refresh"`
	Regex       string      `json:"regex"`
	Sort        int         `json:"sort,omitempty"`
	Type        string      `json:"type"`
}

// TimeRange is the default time range.
type TimeRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// ds is the templated data source every panel, query and variable uses, so
// a dashboard works with whichever Prometheus the viewer picks.
var ds = &Datasource{Type: "prometheus", UID: "${datasource}"}

// datasourceVar is the data source variable, named datasource.
func datasourceVar() Variable {
	return Variable{
		Current: map[string]any{}, Label: "Data source", Name: "datasource",
		Options: []any{}, Query: "prometheus", Refresh: 1, Type: "datasource",
	}
}

// labelVar is a multi-value variable of a label's values on metric (with
// selector, which may refer to earlier variables), defaulting to all.
func labelVar(name, label, metric, selector, description string) Variable {
	def := "label_values(" + metric + selector + ", " + name + ")"
	return Variable{
		AllValue:    ".*",
		Current:     map[string]any{"selected": true, "text": []string{"All"}, "value": []string{"$__all"}},
		Datasource:  ds,
		Definition:  def,
		Description: description,
		IncludeAll:  true,
		Label:       label,
		Multi:       true,
		Name:        name,
		Options:     []any{},
		Query:       map[string]any{"qryType": 1, "query": def, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
		Refresh:     2, // on time range change: targets come and go
		Sort:        1,
		Type:        "query",
	}
}

// defaultTo makes v start at value instead of all.
func defaultTo(v Variable, value string) Variable {
	v.Current = map[string]any{"selected": true, "text": []string{value}, "value": []string{value}}
	return v
}

// jobVars are the job and instance variables of inferprobe's own series,
// taken from metric within the mixin's selector: several inferprobe
// deployments, or a test one, scraped by one Prometheus can be told apart.
func jobVars(metric string) []Variable {
	return []Variable{
		labelVar("job", "Job", metric, matchSet(ownMatchers[0]), "Scrape jobs of inferprobe (within the mixin's selector)."),
		labelVar("instance", "Instance", metric, matchSet(ownMatchers[0], `job=~"$job"`), "inferprobe processes of the selected jobs."),
	}
}

// requestVars are the job, instance, target, model and scenario variables,
// taken from inferprobe_requests_total, each narrowed by the ones before it.
func requestVars() []Variable {
	return append(append([]Variable{datasourceVar()}, jobVars("inferprobe_requests_total")...),
		labelVar("target", "Target", "inferprobe_requests_total", selector(), "Targets of the scenario file (the target label)."),
		labelVar("model", "Model", "inferprobe_requests_total", selector(matchTarget), "Models served by the selected targets."),
		labelVar("scenario", "Scenario", "inferprobe_requests_total", selector(matchTarget, matchModel), "Probes (and bursts) sending to the selected targets."),
	)
}

// phaseVar is the phase variable, starting at probe: the steady probe
// traffic, what users feel.
func phaseVar() Variable {
	return defaultTo(labelVar("phase", "Phase", "inferprobe_requests_total", selector(matchTarget),
		"probe: the steady probe traffic (the default, what users feel); burst: load-test runs; All: both."), "probe")
}

// simulatedLabel marks the demo's simulated GPUs; Files sets it from the
// mixin's config.
var simulatedLabel string

// gpuVars pick the GPU series: the job exporting them (one, so that GPUs
// exported both by inferprobe and by dcgm-exporter are not counted twice),
// whether the demo's simulated GPUs are included, the host and the GPU.
func gpuVars() []Variable {
	job := Variable{
		Current: map[string]any{}, Datasource: ds, Definition: "label_values(DCGM_FI_DEV_POWER_USAGE, job)",
		Description: "The one job whose GPU series are shown: inferprobe's own GPU collector or dcgm-exporter, not both, so no GPU is counted twice.",
		Label:       "GPU job", Name: "gpu_job", Options: []any{},
		Query:   map[string]any{"qryType": 1, "query": "label_values(DCGM_FI_DEV_POWER_USAGE, job)", "refId": "PrometheusVariableQueryEditor-VariableQuery"},
		Refresh: 2, Sort: 1, Type: "query",
	}
	// The matcher is simulated!="$simulated_gpus": "true" drops the simulated
	// GPUs, "none" (a value no series has) keeps every GPU.
	simulated := Variable{
		Current:     map[string]any{"selected": true, "text": "exclude", "value": "true"},
		Description: "The demo's simulated GPUs (label " + simulatedLabel + `="true", not real telemetry) are left out unless included here.`,
		Label:       "Simulated GPUs", Name: "simulated_gpus",
		Options: []any{
			map[string]any{"selected": true, "text": "exclude", "value": "true"},
			map[string]any{"selected": false, "text": "include", "value": "none"},
		},
		Query: "exclude : true, include : none", Type: "custom",
	}
	dcgm := matchSet(`job=~"$gpu_job"`, simulatedLabel+`!="$simulated_gpus"`)
	return []Variable{
		job, simulated,
		labelVar("Hostname", "Host", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", dcgm, "Hosts whose GPUs are exported (dcgm-exporter's Hostname label)."),
		labelVar("gpu", "GPU", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", matchSet(`job=~"$gpu_job"`, simulatedLabel+`!="$simulated_gpus"`, `Hostname=~"$Hostname"`), "GPU index on the host."),
	}
}

// gpuSelector selects the GPU series the GPU variables pick.
func gpuSelector() string {
	return matchSet(`job=~"$gpu_job"`, simulatedLabel+`!="$simulated_gpus"`, `Hostname=~"$Hostname"`, `gpu=~"$gpu"`)
}

// builtInAnnotation is Grafana's own annotations and alerts.
func builtInAnnotation() Annotation {
	return Annotation{
		BuiltIn: 1, Datasource: &Datasource{Type: "grafana", UID: "-- Grafana --"}, Enable: true, Hide: true,
		IconColor: "rgba(0, 211, 255, 1)", Name: "Annotations & Alerts", Type: "dashboard",
		Target: &AnnotationTarget{Limit: 100, Tags: []string{}, Type: "dashboard"},
	}
}

// burstAnnotation marks burst runs, so latency under a burst is not taken
// for a regression.
func burstAnnotation(targetSel string) Annotation {
	return Annotation{
		Datasource: ds, Enable: true, Expr: "max by (burst, target) (inferprobe_burst_running" + targetSel + ") == 1",
		IconColor: "orange", Name: "Burst runs", Step: "15s", TagKeys: "burst,target", TitleFormat: "burst {{burst}} on {{target}}",
	}
}

// newDashboard fills in what every inferprobe dashboard shares.
func newDashboard(uid, title, description string, vars []Variable, annotations []Annotation, rows ...row) *Dashboard {
	return &Dashboard{
		Annotations:  Annotations{List: append([]Annotation{builtInAnnotation()}, annotations...)},
		Description:  description,
		Editable:     true,
		GraphTooltip: 1,
		Links: []Link{{AsDropdown: true, IncludeVars: true, KeepTime: true, Tags: []string{"inferprobe"},
			Title: "inferprobe dashboards", Type: "dashboards"}},
		Panels:        layout(rows),
		Refresh:       "30s",
		SchemaVersion: schemaVersion,
		Tags:          []string{"inferprobe"},
		Templating:    Templating{List: vars},
		Time:          TimeRange{From: "now-3h", To: "now"},
		Timezone:      "browser",
		Title:         title,
		UID:           uid,
		Version:       1,
	}
}

// row is a titled row of panels, laid out left to right.
type row struct {
	title  string
	panels []*Panel
}

// layout places the rows' panels on the grid, wrapping at 24 columns, and
// numbers every panel.
func layout(rows []row) []*Panel {
	var out []*Panel
	y, id := 0, 1
	for _, r := range rows {
		collapsed := false
		out = append(out, &Panel{Collapsed: &collapsed, GridPos: GridPos{H: 1, W: 24, Y: y}, ID: id, Title: r.title, Type: "row"})
		id++
		y++
		x, h := 0, 0
		for _, p := range r.panels {
			if x+p.GridPos.W > 24 {
				x, y, h = 0, y+h, 0
			}
			p.GridPos.X, p.GridPos.Y = x, y
			p.ID = id
			id++
			x += p.GridPos.W
			h = max(h, p.GridPos.H)
			out = append(out, p)
		}
		y += h
	}
	return out
}

// query is one query of a panel: an expression and its legend.
type query struct {
	expr, legend string
}

func q(expr, legend string) query { return query{expr, legend} }

// exemplarFamilies are the histograms whose observations carry exemplars
// (collector/requests.go).
var exemplarFamilies = []string{
	"inferprobe_time_to_first_token_seconds", "inferprobe_time_to_first_output_token_seconds",
	"inferprobe_inter_token_latency_seconds", "inferprobe_request_duration_seconds",
}

// targets turns queries into targets with refIds A, B, …; instant queries
// are evaluated once at the end of the range, the others over it.
func targets(instant bool, format string, qs []query) []Target {
	ts := make([]Target, len(qs))
	for i, qu := range qs {
		ts[i] = Target{
			Datasource: ds, EditorMode: "code", Expr: qu.expr, Format: format, Instant: instant,
			LegendFormat: qu.legend, Range: !instant, RefID: string(rune('A' + i)),
			Exemplar: !instant && slices.ContainsFunc(exemplarFamilies, func(f string) bool { return strings.Contains(qu.expr, f) }),
		}
	}
	return ts
}

func ptr[T any](v T) *T { return &v }

// greenBase is a threshold list with only the base colour.
var greenBase = Thresholds{Mode: "absolute", Steps: []Step{{Color: "green"}}}

// thresholds builds steps: the base colour, then (value, colour) pairs.
func thresholds(base string, steps ...any) Thresholds {
	t := Thresholds{Mode: "absolute", Steps: []Step{{Color: base}}}
	for i := 0; i+1 < len(steps); i += 2 {
		t.Steps = append(t.Steps, Step{Color: steps[i+1].(string), Value: ptr(steps[i].(float64))})
	}
	return t
}

// timeseries is a line graph over the time range. Latency (unit s) is drawn
// on a log-2 axis, so that p50 and p99.9 fit one panel and a doubling looks
// the same at any level.
func timeseries(title, description, unit string, w, h int, qs ...query) *Panel {
	custom := map[string]any{
		"drawStyle": "line", "fillOpacity": 10, "lineWidth": 1, "pointSize": 4, "showPoints": "never",
		"spanNulls": false, "axisPlacement": "auto", "axisSoftMin": 0,
	}
	if unit == "s" {
		custom["scaleDistribution"] = map[string]any{"type": "log", "log": 2}
		delete(custom, "axisSoftMin") // no 0 on a log axis
	}
	return &Panel{
		Datasource:  ds,
		Description: description,
		FieldConfig: &FieldConfig{
			Defaults: FieldDefaults{
				Color:    map[string]any{"mode": "palette-classic"},
				Custom:   custom,
				Mappings: []any{}, Thresholds: greenBase, Unit: unit,
			},
			Overrides: []Override{},
		},
		GridPos: GridPos{H: h, W: w},
		Options: map[string]any{
			"legend":  map[string]any{"calcs": []string{"lastNotNull", "max"}, "displayMode": "table", "placement": "bottom", "showLegend": true},
			"tooltip": map[string]any{"mode": "multi", "sort": "desc"},
		},
		Targets: targets(false, "time_series", qs),
		Title:   title,
		Type:    "timeseries",
	}
}

// withRightAxis gives the query with refId its own unit on a right-hand
// axis, for a panel that sets two measures side by side.
func withRightAxis(p *Panel, refID, unit string) *Panel {
	p.FieldConfig.Overrides = append(p.FieldConfig.Overrides, Override{
		Matcher: Matcher{ID: "byFrameRefID", Options: refID},
		Properties: []Property{
			{ID: "unit", Value: unit},
			{ID: "custom.axisPlacement", Value: "right"},
		},
	})
	return p
}

// stat shows each series' current value, coloured by th.
func stat(title, description, unit string, w, h int, th Thresholds, qs ...query) *Panel {
	return &Panel{
		Datasource:  ds,
		Description: description,
		FieldConfig: &FieldConfig{
			Defaults:  FieldDefaults{Color: map[string]any{"mode": "thresholds"}, Mappings: []any{}, Thresholds: th, Unit: unit},
			Overrides: []Override{},
		},
		GridPos: GridPos{H: h, W: w},
		Options: map[string]any{
			"colorMode": "background", "graphMode": "none", "justifyMode": "auto", "orientation": "auto",
			"reduceOptions": map[string]any{"calcs": []string{"lastNotNull"}, "fields": "", "values": false},
			"textMode":      "value_and_name", "wideLayout": true, "showPercentChange": false,
		},
		Targets: targets(true, "time_series", qs),
		Title:   title,
		Type:    "stat",
	}
}

// withMappings maps values to text (and colours) in a stat or timeline.
func withMappings(p *Panel, m map[string][2]string) *Panel {
	opts := map[string]any{}
	for i, v := range slices.Sorted(maps.Keys(m)) {
		opts[v] = map[string]any{"color": m[v][1], "index": i, "text": m[v][0]}
	}
	p.FieldConfig.Defaults.Mappings = []any{map[string]any{"options": opts, "type": "value"}}
	return p
}

// bars shows each series' current value as a horizontal bar.
func bars(title, description, unit string, w, h int, qs ...query) *Panel {
	return &Panel{
		Datasource:  ds,
		Description: description,
		FieldConfig: &FieldConfig{
			Defaults: FieldDefaults{
				Color: map[string]any{"mode": "palette-classic"}, Mappings: []any{},
				Min: ptr(0.0), Thresholds: greenBase, Unit: unit,
			},
			Overrides: []Override{},
		},
		GridPos: GridPos{H: h, W: w},
		Options: map[string]any{
			"displayMode": "basic", "orientation": "horizontal", "showUnfilled": true, "valueMode": "color",
			"namePlacement": "left", "sizing": "auto", "minVizHeight": 16, "maxVizHeight": 300,
			"reduceOptions": map[string]any{"calcs": []string{"lastNotNull"}, "fields": "", "values": false},
			"legend":        map[string]any{"calcs": []string{}, "displayMode": "list", "placement": "bottom", "showLegend": false},
		},
		Targets: targets(true, "time_series", qs),
		Title:   title,
		Type:    "bargauge",
	}
}

// heatmap renders a histogram's buckets over time, as Grafana does for a
// query that returns native histograms or classic buckets by le, on a log-2
// latency axis.
func heatmap(title, description, unit string, w, h int, expr string) *Panel {
	return &Panel{
		Datasource:  ds,
		Description: description,
		FieldConfig: &FieldConfig{
			Defaults:  FieldDefaults{Custom: map[string]any{"scaleDistribution": map[string]any{"type": "log", "log": 2}}, Mappings: []any{}, Thresholds: greenBase, Unit: unit},
			Overrides: []Override{},
		},
		GridPos: GridPos{H: h, W: w},
		Options: map[string]any{
			"calculate":    false,
			"cellGap":      0,
			"color":        map[string]any{"mode": "scheme", "scheme": "Spectral", "scale": "exponential", "exponent": 0.5, "steps": 64, "reverse": false, "fill": "dark"},
			"exemplars":    map[string]any{"color": "rgba(255,0,255,0.7)"},
			"filterValues": map[string]any{"le": 1e-9},
			"legend":       map[string]any{"show": true},
			"rowsFrame":    map[string]any{"layout": "auto"},
			"tooltip":      map[string]any{"mode": "single", "yHistogram": true, "showColorScale": false},
			"yAxis":        map[string]any{"axisPlacement": "left", "reverse": false, "unit": unit},
		},
		Targets: targets(false, "heatmap", []query{{expr, "{{le}}"}}),
		Title:   title,
		Type:    "heatmap",
	}
}

// timeline shows a state (such as running / idle) over time.
func timeline(title, description, unit string, w, h int, qs ...query) *Panel {
	return &Panel{
		Datasource:  ds,
		Description: description,
		FieldConfig: &FieldConfig{
			Defaults: FieldDefaults{
				Color: map[string]any{"mode": "thresholds"}, Custom: map[string]any{"fillOpacity": 80, "lineWidth": 0},
				Mappings: []any{}, Thresholds: greenBase, Unit: unit,
			},
			Overrides: []Override{},
		},
		GridPos: GridPos{H: h, W: w},
		Options: map[string]any{
			"alignValue": "left", "mergeValues": true, "rowHeight": 0.9, "showValue": "never",
			"legend":  map[string]any{"displayMode": "list", "placement": "bottom", "showLegend": true},
			"tooltip": map[string]any{"mode": "single", "sort": "none"},
		},
		Targets: targets(false, "time_series", qs),
		Title:   title,
		Type:    "state-timeline",
	}
}

// selector renders the matchers of inferprobe's own series and then these
// as {a, b}; empty parts are dropped.
func selector(matchers ...string) string {
	return matchSet(append(slices.Clone(ownMatchers), matchers...)...)
}

// own is one of inferprobe's own metrics with the job and instance matchers.
func own(metric string) string { return metric + selector() }

// matchSet renders label matchers as {a, b}; empty parts are dropped.
func matchSet(matchers ...string) string {
	var kept []string
	for _, m := range matchers {
		if m != "" {
			kept = append(kept, m)
		}
	}
	return "{" + strings.Join(kept, ", ") + "}"
}
