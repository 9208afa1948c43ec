// A folder that is no stage.
